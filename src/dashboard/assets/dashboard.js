// canon review dashboard. Everything shown comes from canon's /v3 JSON API called with the
// reviewer's credential; tenant text is only ever put in the page as text (textContent,
// attributes), never as HTML. Numbers are printed as the API sent them.
"use strict";

const CREDENTIAL = "canon.review.credential";
const UNDO = "canon.review.undo";

const $ = (selector, root = document) => root.querySelector(selector);

/** An element with attributes and children (strings become text nodes, never HTML). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

// ---- credential and calls ----

/** A dashboard token is a JWT (three base64url parts, starting `ey`); anything else is a key. */
function credentialHeaders() {
  const credential = sessionStorage.getItem(CREDENTIAL);
  if (!credential) return {};
  return /^ey[\w-]*\.[\w-]+\.[\w-]+$/.test(credential)
    ? { authorization: `Bearer ${credential}` }
    : { "x-api-key": credential };
}

async function api(method, path, body) {
  const init = { method, headers: credentialHeaders(), credentials: "omit" };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!response.ok) {
    const error = new Error((data && data.message) || `${response.status} ${response.statusText}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

function say(message, isError = false) {
  const status = $("#status");
  status.textContent = message;
  status.className = isError ? "error" : "";
}

/** Runs an action, reporting its error in the status line (a 401 signs out). */
async function attempt(action) {
  try {
    await action();
  } catch (error) {
    if (error.status === 401) {
      sessionStorage.removeItem(CREDENTIAL);
      showSignIn();
    }
    say(error.message, true);
  }
}

// ---- undo: the tab's decisions, newest last ----

function undoStack() {
  try { return JSON.parse(sessionStorage.getItem(UNDO) || "[]"); } catch { return []; }
}

function remember(decision) {
  const stack = undoStack();
  stack.push(decision);
  sessionStorage.setItem(UNDO, JSON.stringify(stack.slice(-50)));
}

async function undoLast() {
  const stack = undoStack();
  const last = stack.pop();
  if (!last) { say("Nothing to undo."); return false; }
  if (last.kind === "status") {
    await api("POST", `/v3/entities/${encodeURIComponent(last.entityID)}/reopen`, { status: last.previous });
  } else if (last.kind === "suggestion") {
    await api("POST", `/v3/merge-suggestions/${encodeURIComponent(last.suggestionID)}/reopen`);
  } else if (last.kind === "canonical") {
    await api("PATCH", `/v3/entities/${encodeURIComponent(last.entityID)}`, { canonical: last.previous });
  } else if (last.kind === "merge") {
    await api("POST", `/v3/merges/${encodeURIComponent(last.mergeID)}/undo`);
  } else if (last.kind === "type") {
    await api("PATCH", `/v3/entities/${encodeURIComponent(last.entityID)}`, { assignedTypeID: last.previous });
  } else if (last.kind === "synonym_added") {
    await api("DELETE", `/v3/entities/${encodeURIComponent(last.entityID)}/synonyms/${encodeURIComponent(last.synonymID)}`);
  } else if (last.kind === "synonym_removed") {
    // Attached again as it was (text, source, locale); it gets a new synonymID.
    const { text, source, locale } = last;
    await api("POST", `/v3/entities/${encodeURIComponent(last.entityID)}/synonyms`, { text, source, locale });
  }
  sessionStorage.setItem(UNDO, JSON.stringify(stack));
  say(`Undone: ${last.label}`);
  return true;
}

// ---- sign-in ----

function showSignIn() {
  $("#sign-in").hidden = false;
  $("#page").hidden = true;
  $("#sign-out").hidden = true;
  $("#credential").focus();
}

async function signIn(event) {
  event.preventDefault();
  const credential = $("#credential").value.trim();
  sessionStorage.setItem(CREDENTIAL, credential);
  try {
    await api("GET", "/v3/review-queue?limit=1");
  } catch (error) {
    sessionStorage.removeItem(CREDENTIAL);
    say(`Sign-in refused: ${error.message}`, true);
    return;
  }
  $("#credential").value = "";
  say("Signed in.");
  start();
}

function start() {
  // The keys act on the page: leave the (now hidden) credential field.
  if (document.activeElement instanceof HTMLElement) document.activeElement.blur();
  $("#sign-in").hidden = true;
  $("#page").hidden = false;
  $("#sign-out").hidden = false;
  const page = $("#page").dataset.page;
  const load = { queue: Queue.load, suggestions: Suggestions.load, entity: EntityCard.load }[page];
  attempt(load);
}

// ---- keys ----

function isTyping(event) {
  const target = event.target;
  return target instanceof HTMLInputElement || target instanceof HTMLSelectElement ||
    target instanceof HTMLTextAreaElement;
}

function onKey(event, handlers) {
  if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event)) return;
  if ($("#page").hidden || document.querySelector("dialog[open]")) return;
  if (event.key === "?") { $("#keys").showModal(); event.preventDefault(); return; }
  if (event.key === "/") {
    const first = $("#filters input, #filters select");
    if (first) { first.focus(); event.preventDefault(); }
    return;
  }
  const handler = handlers[event.key];
  if (handler) { event.preventDefault(); attempt(handler); }
}

/** Filters kept in the URL: the form is filled from it, and submitting rewrites it. */
function bindFilters(reload) {
  const form = $("#filters");
  const params = new URLSearchParams(location.search);
  for (const field of form.elements) {
    if (!field.name) continue;
    if (field.type === "checkbox") field.checked = params.get(field.name) === field.value;
    else if (params.has(field.name)) field.value = params.get(field.name);
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const field of form.elements) {
      if (!field.name || (field.type === "checkbox" && !field.checked)) continue;
      if (field.value.trim()) next.set(field.name, field.value.trim());
    }
    history.replaceState(null, "", `${location.pathname}${next.toString() ? `?${next}` : ""}`);
    attempt(reload);
  });
}

function filterParams(names) {
  const params = new URLSearchParams(location.search);
  const out = new URLSearchParams();
  for (const name of names) if (params.get(name)) out.set(name, params.get(name));
  return out;
}

// ---- the queue ----

const Queue = {
  entities: [],
  index: 0,
  nextCursor: null,

  async load() {
    const page = await Queue.read(null, 1);
    Queue.entities = page.entities;
    Queue.nextCursor = page.nextCursor;
    Queue.index = Math.min(Queue.index, Math.max(0, Queue.entities.length - 1));
    Queue.render();
    // The counters only once the rows are shown: the rows are what a reviewer acts on, and
    // counting a million entities takes the graph engine longer than a page of rows (asked
    // for together, the page waited behind the counts in the engine).
    await Queue.counts();
  },

  // Rows after `cursor`, 50 a request. The server reads a bounded part of the tenant a
  // request, so where the filters match little a page ends short (empty even) with a cursor
  // where its read stopped: read on until `enough` rows are in hand, five requests at most
  // (a load after each decision wants one row to show, not a whole page).
  async read(cursor, enough = 50) {
    const query = filterParams(["status", "type", "bucket", "since", "assignedTo"]);
    query.set("limit", "50");
    const entities = [];
    for (let reads = 0; reads < 5; reads++) {
      if (cursor) query.set("cursor", cursor);
      const page = await api("GET", `/v3/review-queue?${query}`);
      entities.push(...page.entities);
      cursor = page.nextCursor || null;
      if (!cursor || entities.length >= enough) break;
    }
    return { entities, nextCursor: cursor };
  },

  async counts() {
    const query = filterParams(["type", "bucket", "since", "assignedTo"]);
    const counts = await api("GET", `/v3/review-queue/counts?${query}`);
    const box = $("#counts");
    box.replaceChildren(
      el("span", { "data-count": "left" }, "Left: ", el("strong", {}, counts.left)),
      el("span", { "data-count": "doneToday" }, "Done today: ", el("strong", {}, counts.doneToday)),
      ...Object.entries(counts.byStatus).map(([status, n]) =>
        el("span", { "data-count": status }, `${status}: `, el("strong", {}, n))),
    );
  },

  async more() {
    if (!Queue.nextCursor) return;
    const page = await Queue.read(Queue.nextCursor);
    Queue.entities.push(...page.entities);
    Queue.nextCursor = page.nextCursor;
    Queue.render();
  },

  render() {
    const body = $("#queue tbody");
    body.replaceChildren(...Queue.entities.map((entity, i) => el("tr", {
      "data-entity-id": entity.entityID,
      class: i === Queue.index ? "selected" : "",
      "aria-selected": i === Queue.index ? "true" : "false",
      onclick: () => { Queue.index = i; Queue.render(); },
    },
    el("td", {}, el("input", { type: "checkbox", "aria-label": `Select ${entity.canonical}`, "data-select": entity.entityID })),
    el("td", {}, el("a", { href: `/review/entities/${encodeURIComponent(entity.entityID)}` }, entity.canonical)),
    el("td", {}, entity.type),
    el("td", {}, entity.status),
    el("td", {}, entity.mentionCount))));
    if (!Queue.entities.length) {
      const empty = Queue.nextCursor
        ? "None found yet in the part of the queue read so far: More reads on."
        : "Nothing left under these filters.";
      body.append(el("tr", {}, el("td", { colspan: 5 }, empty)));
    }
    $("#more").hidden = !Queue.nextCursor;
    const row = body.children[Queue.index];
    if (row && row.scrollIntoView) row.scrollIntoView({ block: "nearest" });
  },

  current() { return Queue.entities[Queue.index]; },

  move(step) {
    Queue.index = Math.max(0, Math.min(Queue.entities.length - 1, Queue.index + step));
    Queue.render();
  },

  async decide(status) {
    const entity = Queue.current();
    if (!entity) return;
    await api("PATCH", `/v3/entities/${encodeURIComponent(entity.entityID)}`, { status });
    const verb = status === "approved" ? "Validated" : "Rejected";
    remember({ kind: "status", entityID: entity.entityID, previous: entity.status, label: `${verb} ${entity.canonical}` });
    say(`${verb} ${entity.canonical}. Press z to undo.`);
    await Queue.load();
  },

  async bulk(status) {
    const ids = [...document.querySelectorAll("[data-select]:checked")].map((box) => box.dataset.select);
    if (!ids.length) { say("Select rows first (the boxes in the first column).", true); return; }
    const verb = status === "approved" ? "validate" : "reject";
    if (!confirm(`This will ${verb} ${ids.length} entit${ids.length === 1 ? "y" : "ies"}. Continue?`)) return;
    const result = await api("POST", "/v3/entities/bulk-validate", { entityIDs: ids, status });
    say(`${result.summary.validated} changed, ${result.summary.skipped} skipped, ${result.summary.rejectedRow} refused.`);
    await Queue.load();
  },

  async undo() { if (await undoLast()) await Queue.load(); },

  bind() {
    bindFilters(Queue.load);
    const actions = {
      validate: () => Queue.decide("approved"),
      reject: () => Queue.decide("rejected"),
      skip: async () => Queue.move(1),
      undo: Queue.undo,
      "bulk-validate": () => Queue.bulk("approved"),
      "bulk-reject": () => Queue.bulk("rejected"),
      "all-validate": () => BulkAll.queue("approved"),
      "all-reject": () => BulkAll.queue("rejected"),
    };
    for (const button of document.querySelectorAll("[data-action]")) {
      button.addEventListener("click", () => attempt(actions[button.dataset.action]));
    }
    $("#more").addEventListener("click", () => attempt(Queue.more));
    document.addEventListener("keydown", (event) => onKey(event, {
      j: async () => Queue.move(1),
      k: async () => Queue.move(-1),
      v: actions.validate,
      r: actions.reject,
      s: actions.skip,
      z: actions.undo,
      e: async () => {
        const entity = Queue.current();
        if (entity) location.href = `/review/entities/${encodeURIComponent(entity.entityID)}`;
      },
    }));
  },
};

// ---- merge suggestions ----

const Suggestions = {
  page: null,
  index: 0,
  swapped: false,

  async load() {
    const query = filterParams(["order", "bucket"]);
    if (!query.get("order")) query.set("order", "uncertain");
    query.set("limit", "50");
    Suggestions.page = await api("GET", `/v3/merge-suggestions?${query}`);
    Suggestions.index = Math.min(Suggestions.index, Math.max(0, Suggestions.page.suggestions.length - 1));
    Suggestions.swapped = false;
    await Suggestions.render();
  },

  current() { return Suggestions.page && Suggestions.page.suggestions[Suggestions.index]; },

  async render() {
    const card = $("#card");
    const list = Suggestions.page.suggestions;
    $("#progress").textContent = list.length
      ? `Suggestion ${Suggestions.index + 1} of ${list.length}${Suggestions.page.hasMore ? "+" : ""} open`
      : "No open merge suggestions.";
    card.classList.toggle("blind", new URLSearchParams(location.search).get("blind") === "1");
    const suggestion = Suggestions.current();
    if (!suggestion) { card.replaceChildren(); return; }
    card.dataset.suggestionId = suggestion.suggestionID;
    const details = await Promise.all(suggestion.entities.map((e) =>
      api("GET", `/v3/entities/${encodeURIComponent(e.entityID)}`)));
    const [survivor, merged] = Suggestions.swapped ? [details[1], details[0]] : [details[0], details[1]];
    const explanation = (suggestion.signals && suggestion.signals.explanation) || null;
    card.replaceChildren(
      el("p", { class: "scored" }, "Match probability (API): ", el("strong", { "data-score": "" }, suggestion.score)),
      el("div", { class: "sides" }, side(details[0], details[0] === survivor), side(details[1], details[1] === survivor)),
      el("p", { class: "preview", "data-survivor": survivor.entityID },
        el("strong", {}, `Survivor: ${survivor.canonical}`), ` (${survivor.entityID}). `,
        `${merged.canonical} merges into it: ${merged.surfaceForms.length} surface forms and `,
        `${merged.mentionCount} mentions move, with its relations. Press “Swap sides” to keep the other.`),
      explanation ? fieldTable(explanation, suggestion.entities) : el("p", {}, "No per-field explanation was stored for this pair."),
      explanation ? waterfall(explanation, Suggestions.page) : "",
    );
  },

  move(step) {
    const n = Suggestions.page ? Suggestions.page.suggestions.length : 0;
    Suggestions.index = Math.max(0, Math.min(n - 1, Suggestions.index + step));
    Suggestions.swapped = false;
    return Suggestions.render();
  },

  async accept() {
    const suggestion = Suggestions.current();
    if (!suggestion) return;
    const survivor = suggestion.entities[Suggestions.swapped ? 1 : 0];
    await api("POST", `/v3/merge-suggestions/${encodeURIComponent(suggestion.suggestionID)}/accept?survivor=${encodeURIComponent(survivor.entityID)}${blindParam("&")}`);
    remember({ kind: "suggestion", suggestionID: suggestion.suggestionID, label: `merge into ${survivor.canonical}` });
    say(`Merged into ${survivor.canonical}. Press z to undo.`);
    await Suggestions.load();
  },

  async dismiss() {
    const suggestion = Suggestions.current();
    if (!suggestion) return;
    await api("POST", `/v3/merge-suggestions/${encodeURIComponent(suggestion.suggestionID)}/dismiss${blindParam("?")}`);
    remember({ kind: "suggestion", suggestionID: suggestion.suggestionID, label: "dismissal" });
    say("Dismissed. Press z to undo.");
    await Suggestions.load();
  },

  async undo() { if (await undoLast()) await Suggestions.load(); },

  bind() {
    bindFilters(Suggestions.load);
    const actions = {
      accept: Suggestions.accept,
      dismiss: Suggestions.dismiss,
      skip: () => Suggestions.move(1),
      swap: () => { Suggestions.swapped = !Suggestions.swapped; return Suggestions.render(); },
      undo: Suggestions.undo,
      "all-dismiss": () => BulkAll.suggestions(),
    };
    for (const button of document.querySelectorAll("[data-action]")) {
      button.addEventListener("click", () => attempt(actions[button.dataset.action]));
    }
    document.addEventListener("keydown", (event) => onKey(event, {
      j: () => Suggestions.move(1),
      k: () => Suggestions.move(-1),
      a: actions.accept,
      d: actions.dismiss,
      s: actions.skip,
      z: actions.undo,
      e: async () => {
        const suggestion = Suggestions.current();
        if (suggestion) location.href = `/review/entities/${encodeURIComponent(suggestion.entities[0].entityID)}`;
      },
    }));
  },
};

function side(entity, isSurvivor) {
  return el("section", { class: isSurvivor ? "side survivor" : "side", "aria-label": entity.canonical },
    el("h2", {}, el("a", { href: `/review/entities/${encodeURIComponent(entity.entityID)}` }, entity.canonical)),
    el("p", {}, isSurvivor ? "✓ survives" : "→ merges into the other"),
    el("dl", {},
      el("dt", {}, "Type"), el("dd", {}, entity.type),
      el("dt", {}, "Status"), el("dd", {}, entity.status),
      el("dt", {}, "Mentions"), el("dd", {}, entity.mentionCount),
      el("dt", {}, "Surface forms"), el("dd", {}, entity.surfaceForms.join(" · ") || "none")));
}

/** How a field's weight reads: a word and an icon as well as a colour. */
function agreement(weight) {
  if (weight > 0.5) return { word: "agree", icon: "✓", cls: "agree" };
  if (weight < -0.5) return { word: "disagree", icon: "✗", cls: "disagree" };
  return { word: "neutral", icon: "≈", cls: "partial" };
}

/** The field-by-field why: each compared field's two values (the first entity's, then the
 * second's, as the API pairs them), its level, and its agreement as a word and icon. */
function fieldTable(explanation, entities) {
  const heads = ["Field", entities[0].canonical, entities[1].canonical, "Level", "Agreement", "Weight (bits)", "m", "u"];
  return el("table", { class: "scored", id: "explanation" },
    el("caption", {}, `Why: prior ${explanation.priorWeight} bits, match weight ${explanation.matchWeight} bits, probability ${explanation.probability}`),
    el("thead", {}, el("tr", {}, heads.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, (explanation.fields || []).map((field) => {
      const a = agreement(field.weight);
      return el("tr", { "data-field": field.field },
        el("th", { scope: "row" }, field.field), el("td", {}, field.valueA ?? "—"), el("td", {}, field.valueB ?? "—"),
        el("td", {}, field.level), el("td", { class: a.cls }, `${a.icon} ${a.word}`), el("td", {}, field.weight),
        el("td", {}, field.m ?? "—"), el("td", {}, field.u ?? "—"));
    })));
}

/** The Fellegi–Sunter explanation as a horizontal waterfall: prior, one bar per field in
 * bits, then the final weight; the suggest and auto-merge thresholds drawn as lines. Bar
 * positions are running sums of the API's weights; every printed number is the API's. */
function waterfall(explanation, page) {
  const bits = (p) => Math.log2(p / (1 - p));
  const steps = [{ label: "prior", weight: explanation.priorWeight, from: 0 }];
  let total = explanation.priorWeight;
  for (const field of explanation.fields || []) {
    steps.push({ label: field.field, weight: field.weight, from: total });
    total += field.weight;
  }
  steps.push({ label: `final (p = ${explanation.probability})`, weight: explanation.matchWeight, from: 0, total: true });
  const lines = [
    { label: "suggest", at: bits(page.suggestThreshold) },
    { label: "auto-merge", at: bits(page.autoMergeThreshold) },
  ].filter((line) => Number.isFinite(line.at));
  const ends = steps.flatMap((s) => [s.from, s.from + s.weight]).concat(lines.map((l) => l.at), [0]);
  const lo = Math.min(...ends) - 1, hi = Math.max(...ends) + 1;
  const width = 640, left = 170, right = 20, row = 22, top = 24;
  const x = (w) => left + ((w - lo) / (hi - lo)) * (width - left - right);
  const height = top + steps.length * row + 10;
  const chart = svg("svg", { class: "waterfall scored", width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": "Match weight waterfall; the table above has the same numbers" });
  chart.append(svg("line", { x1: x(0), x2: x(0), y1: top - 6, y2: height, stroke: "#1b1f23" }));
  for (const line of lines) {
    chart.append(svg("line", { class: "threshold", x1: x(line.at), x2: x(line.at), y1: top - 6, y2: height }));
    chart.append(svg("text", { x: x(line.at) + 2, y: 12 }, line.label));
  }
  steps.forEach((step, i) => {
    const y = top + i * row;
    const a = x(step.from), b = x(step.from + step.weight);
    const cls = step.total ? "total" : step.weight >= 0 ? "pos" : "neg";
    chart.append(svg("text", { x: 4, y: y + 14 }, step.label));
    chart.append(svg("rect", { class: cls, x: Math.min(a, b), y: y + 3, width: Math.max(1, Math.abs(b - a)), height: row - 6 }));
    chart.append(svg("text", { x: Math.max(a, b) + 4, y: y + 14 }, `${step.weight >= 0 ? "+" : "−"}${Math.abs(step.weight)}`));
  });
  return chart;
}

// ---- one entity ----

const EntityCard = {
  entity: null,

  id() { return $("#page").dataset.entityId; },

  /** The entity the card shows; a form sent before the card has loaded says so, not a TypeError. */
  shown() {
    if (!EntityCard.entity) throw new Error("The entity is still loading; try again in a moment.");
    return EntityCard.entity;
  },

  async load() {
    const id = encodeURIComponent(EntityCard.id());
    const [entity, relations, history] = await Promise.all([
      api("GET", `/v3/entities/${id}`),
      api("GET", `/v3/entities/${id}/relations`),
      api("GET", `/v3/entities/${id}/merges`),
    ]);
    EntityCard.entity = entity;
    document.title = `${entity.canonical} · canon`;
    $("#canonical").textContent = entity.canonical;
    $("#facts").textContent = `${entity.entityID} · type ${entity.type || "none"} · status ${entity.status} · ${entity.mentionCount} mentions · bucket ${entity.bucketID}`;
    $("#new-canonical").value = entity.canonical;
    $("#mentions tbody").replaceChildren(...(entity.previewMentions || []).map((m) => el("tr", {},
      el("td", {}, m.surface), el("td", {}, m.referenceID || "—"), el("td", {}, m.page ?? "—"), el("td", {}, m.sectionLabel || "—"))));
    const edges = [...relations.outbound.map((e) => ["→", e, e.targetEntity]), ...relations.inbound.map((e) => ["←", e, e.sourceEntity])];
    $("#relations").replaceChildren(...edges.map(([arrow, edge, other]) => el("li", {},
      `${arrow} ${edge.relationType} `,
      other ? el("a", { href: `/review/entities/${encodeURIComponent(other.id)}` }, other.canonical || other.id) : "?",
      ` (${edge.mentionCount} mentions)`)));
    if (!edges.length) $("#relations").append(el("li", {}, "No relations."));
    $("#history tbody").replaceChildren(...history.merges.map((m) => el("tr", { "data-merge-id": m.mergeID },
      el("td", {}, m.mergeID), el("td", {}, m.survivorID), el("td", {}, m.mergedID), el("td", {}, m.mergedBy),
      el("td", {}, m.undoneAt ? `${m.mergedAt} (undone ${m.undoneAt} by ${m.undoneBy})` : m.mergedAt),
      el("td", {}, `${m.keysMoved} names, ${m.mentionsMoved} mentions, ${m.relationsMoved} relations`),
      el("td", {}, m.undoneAt ? "undone" : el("button", { type: "button", onclick: () => attempt(() => EntityCard.unmerge(m)) }, "Undo merge")))));
    await Synonyms.load(entity.entityID);
    await Timeline.load(entity.entityID);
  },

  async decide(status) {
    const entity = EntityCard.shown();
    await api("PATCH", `/v3/entities/${encodeURIComponent(entity.entityID)}`, { status });
    const verb = status === "approved" ? "Validated" : "Rejected";
    remember({ kind: "status", entityID: entity.entityID, previous: entity.status, label: `${verb} ${entity.canonical}` });
    say(`${verb}. Press z to undo.`);
    await EntityCard.load();
  },

  async unmerge(merge) {
    await api("POST", `/v3/merges/${encodeURIComponent(merge.mergeID)}/undo`);
    say(`Merge ${merge.mergeID} undone.`);
    await EntityCard.load();
  },

  async rename(event) {
    event.preventDefault();
    const entity = EntityCard.shown();
    const canonical = $("#new-canonical").value.trim();
    await api("PATCH", `/v3/entities/${encodeURIComponent(entity.entityID)}`, { canonical });
    remember({ kind: "canonical", entityID: entity.entityID, previous: entity.canonical, label: `rename to ${canonical}` });
    say("Renamed. Press z to undo.");
    await EntityCard.load();
  },

  async retype(event) {
    event.preventDefault();
    const entity = EntityCard.shown();
    await api("PATCH", `/v3/entities/${encodeURIComponent(entity.entityID)}`, { assignedTypeID: $("#new-type").value.trim() });
    // Undone by assigning the type it had; "" clears an assignment it did not have.
    remember({ kind: "type", entityID: entity.entityID, previous: entity.typeID || "", label: `type change of ${entity.canonical}` });
    say("Type changed. Press z to undo.");
    await EntityCard.load();
  },

  async addSynonym(event) {
    event.preventDefault();
    const text = $("#synonym-text").value.trim();
    const entityID = EntityCard.shown().entityID;
    const added = await api("POST", `/v3/entities/${encodeURIComponent(entityID)}/synonyms`, { text });
    $("#synonym-text").value = "";
    // Adding one the entity has answers it unchanged: undoing that must not remove it.
    const listed = document.querySelector(`#synonyms li[data-synonym-id="${CSS.escape(added.synonymID)}"]`);
    if (listed) {
      say(`“${text}” was already a synonym.`);
    } else {
      remember({ kind: "synonym_added", entityID, synonymID: added.synonymID, label: `synonym “${text}” added` });
      say(`Synonym “${text}” added. Press z to undo.`);
    }
    await EntityCard.load();
  },

  async undo() { if (await undoLast()) await EntityCard.load(); },

  bind() {
    const actions = { validate: () => EntityCard.decide("approved"), reject: () => EntityCard.decide("rejected"), undo: EntityCard.undo };
    for (const button of document.querySelectorAll("[data-action]")) {
      button.addEventListener("click", () => attempt(actions[button.dataset.action]));
    }
    $("#edit-name").addEventListener("submit", (event) => attempt(() => EntityCard.rename(event)));
    $("#edit-type").addEventListener("submit", (event) => attempt(() => EntityCard.retype(event)));
    $("#add-synonym").addEventListener("submit", (event) => attempt(() => EntityCard.addSynonym(event)));
    $("#timeline-more").addEventListener("click", () => attempt(Timeline.more));
    document.addEventListener("keydown", (event) => onKey(event, {
      v: actions.validate,
      r: actions.reject,
      z: actions.undo,
      e: async () => $("#new-canonical").focus(),
    }));
  },
};

// ---- synonyms on the entity page (GET and DELETE /v3/entities/{id}/synonyms) ----

const Synonyms = {
  /** The API's source values as a reviewer reads them. */
  SOURCES: { extracted: "extracted", customer_defined: "customer-defined", sme_approved: "SME-approved" },

  async load(entityID) {
    const page = await api("GET", `/v3/entities/${encodeURIComponent(entityID)}/synonyms`);
    $("#synonyms").replaceChildren(...page.synonyms.map((synonym) => Synonyms.item(entityID, synonym)));
    if (!page.synonyms.length) $("#synonyms").append(el("li", {}, "No synonyms."));
  },

  /** One synonym with its source; a Remove button unless extraction made it (the API
   * refuses those: 409). The text is tenant input: text nodes and attributes only. */
  item(entityID, synonym) {
    const removable = synonym.source !== "extracted";
    return el("li", { "data-synonym-id": synonym.synonymID, "data-source": synonym.source },
      el("span", { class: "synonym-text" }, synonym.text), " ",
      el("span", { class: "synonym-source" }, `(${Synonyms.SOURCES[synonym.source] || synonym.source})`),
      removable ? " " : null,
      removable ? el("button", { type: "button", "aria-label": `Remove synonym ${synonym.text}`,
        onclick: () => attempt(() => Synonyms.remove(entityID, synonym)) }, "Remove") : null);
  },

  async remove(entityID, synonym) {
    const path = `/v3/entities/${encodeURIComponent(entityID)}/synonyms/${encodeURIComponent(synonym.synonymID)}`;
    await api("DELETE", path);
    const { text, source, locale } = synonym;
    remember({ kind: "synonym_removed", entityID, text, source, locale, label: `synonym “${text}” removed` });
    say(`Synonym “${text}” removed. Press z to undo.`);
    await Synonyms.load(entityID);
  },
};

// ---- audit timeline (GET /v3/entities/{id}/timeline), on the entity page ----

const Timeline = {
  entityID: null,
  nextCursor: null,

  async load(entityID) {
    Timeline.entityID = entityID;
    const page = await api("GET", `/v3/entities/${encodeURIComponent(entityID)}/timeline?limit=50`);
    $("#timeline").replaceChildren(...page.items.map(Timeline.item));
    if (!page.items.length) $("#timeline").append(el("li", {}, "Nothing recorded yet."));
    Timeline.nextCursor = page.nextCursor || null;
    $("#timeline-more").hidden = !Timeline.nextCursor;
  },

  async more() {
    if (!Timeline.nextCursor) return;
    const query = new URLSearchParams({ limit: "50", cursor: Timeline.nextCursor });
    const page = await api("GET", `/v3/entities/${encodeURIComponent(Timeline.entityID)}/timeline?${query}`);
    $("#timeline").append(...page.items.map(Timeline.item));
    Timeline.nextCursor = page.nextCursor || null;
    $("#timeline-more").hidden = !Timeline.nextCursor;
  },

  /** One entry as text: when, what, who (tenant text only through text nodes). */
  item(entry) {
    const details = entry.details || {};
    return el("li", { "data-kind": entry.kind, "data-actor": entry.actor },
      el("time", { datetime: entry.at }, entry.at), " ",
      Timeline.describe(entry.kind, details),
      details.blind ? el("span", { class: "blind-label" }, " (decided blind)") : "",
      " ", el("span", { class: "actor" }, `by ${entry.actor}`));
  },

  describe(kind, d) {
    const entity = (id) => el("a", { href: `/review/entities/${encodeURIComponent(id)}` }, id);
    switch (kind) {
      case "status_changed": return `Status ${d.from ?? "?"} → ${d.to}${d.reason ? ` (${d.reason})` : ""}`;
      case "merged": return el("span", {}, "Merged ", entity(d.mergedID), " into ", entity(d.survivorID), ` (${d.mergeID})`);
      case "unmerged": return el("span", {}, "Unmerged ", entity(d.mergedID), " from ", entity(d.survivorID), ` (${d.mergeID})`);
      case "synonym_added": return `Synonym “${d.text}” added`;
      case "synonym_removed": return `Synonym “${d.text}” removed`;
      case "canonical_changed": return `Renamed “${d.from}” → “${d.to}”`;
      case "type_changed": return `Type ${d.from ?? "none"} → ${d.type ?? "none"}`;
      case "suggestion_accepted": return el("span", {}, "Merge suggestion with ", entity(d.otherEntityID), " accepted");
      case "suggestion_dismissed": return el("span", {}, "Merge suggestion with ", entity(d.otherEntityID), " dismissed");
      case "suggestion_reopened": return el("span", {}, "Merge suggestion with ", entity(d.otherEntityID), " reopened");
      default: return kind;
    }
  },
};

// ---- blind labels: a decision taken in blind mode is recorded as blind ----

/** `blind=true` after `separator` when the page is in blind mode, else nothing. */
function blindParam(separator) {
  return new URLSearchParams(location.search).get("blind") === "1" ? `${separator}blind=true` : "";
}

// ---- bulk over "all matching this filter": counted by the server, confirmed once ----

/** Asks once in the page's own dialog (driveable, unlike window.confirm); true to go on. */
function confirmDialog(text) {
  const dialog = $("#confirm");
  $("#confirm-text").textContent = text;
  dialog.returnValue = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "confirm"), { once: true });
    dialog.showModal();
  });
}

const BulkAll = {
  /** The queue's filters from the URL, as the bulk endpoint's `filter`. */
  queueFilter() {
    const params = new URLSearchParams(location.search);
    const filter = {};
    if (params.get("status")) filter.status = [params.get("status")];
    if (params.get("type")) filter.type = [params.get("type")];
    for (const name of ["bucket", "since", "assignedTo"]) if (params.get(name)) filter[name] = params.get(name);
    return filter;
  },

  /** Counts, asks, then applies with the count's selection (409 if the set changed). */
  async run(path, body, noun, verb, report) {
    const counted = await api("POST", path, { ...body, dryRun: true });
    if (!counted.matching) { say(`No ${noun} match this filter.`); return false; }
    const n = counted.matching;
    if (!await confirmDialog(`This will ${verb} ${n} ${noun} matching this filter (at most ${counted.limit} at once). Continue?`)) {
      say("Nothing changed.");
      return false;
    }
    const done = await api("POST", path, { ...body, selection: counted.selection });
    say(report(done));
    return true;
  },

  async queue(status) {
    const verb = status === "approved" ? "validate" : "reject";
    const changed = await BulkAll.run("/v3/review-queue/bulk-validate", { status, filter: BulkAll.queueFilter() },
      "entities", verb, (done) => `${done.summary.validated} of ${done.matching} changed, ${done.summary.rejectedRow} refused.`);
    if (changed) await Queue.load();
  },

  async suggestions() {
    const bucket = new URLSearchParams(location.search).get("bucket") || undefined;
    const blind = new URLSearchParams(location.search).get("blind") === "1";
    const changed = await BulkAll.run("/v3/merge-suggestions/bulk-dismiss", { bucket, blind },
      "open merge suggestions", "dismiss", (done) => `${done.dismissed} of ${done.matching} dismissed.`);
    if (changed) await Suggestions.load();
  },
};

// ---- start ----

document.addEventListener("DOMContentLoaded", () => {
  $("#sign-in").addEventListener("submit", signIn);
  $("#sign-out").addEventListener("click", () => {
    sessionStorage.removeItem(CREDENTIAL);
    sessionStorage.removeItem(UNDO);
    say("Signed out.");
    showSignIn();
  });
  const page = $("#page").dataset.page;
  ({ queue: Queue, suggestions: Suggestions, entity: EntityCard })[page].bind();
  if (sessionStorage.getItem(CREDENTIAL)) start();
  else showSignIn();
});
