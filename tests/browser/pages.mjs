// The dashboard's pages in Debian's chromium, driven by playwright-core (vendored by
// `make provision` under vendor/browser; CANON_BROWSER_MODULES names that folder). Seeds a
// small graph through REST (seed.mjs), signs in through the form, then visits the queue, a
// suggestion card and an entity card, and prints JSON for the Rust caller to check:
//   axe BASE KEY            axe-core's violations on each page (and on the sign-in form)
//   offline BASE KEY        every request to another origin refused and recorded, CSP
//                           violations, failed requests and error responses from canon
//   screenshots BASE KEY DIR  PNGs of the three pages (1280x800) into DIR
//   seed BASE KEY           only the graph (no browser), its IDs printed
//   speed BASE KEY RUNS     ms from navigation to the first queue row / suggestion card
//                           visible, RUNS times each, on a graph seeded before (no seeding)
import { join } from "node:path";
import { launch, openPage, vendored } from "./browser.mjs";
import { seedGraph } from "./seed.mjs";

const [mode, base, key, extra] = process.argv.slice(2);
const origin = new URL(base).origin;

const QUEUE_ROW = "#queue tbody tr[data-entity-id]";
const QUEUE_COUNTERS = "[data-count=left] strong";
const CARD = "#card [data-survivor]";

const seeded = mode === "speed" ? null : await seedGraph(base, key);
if (mode === "seed") {
  console.log(JSON.stringify(seeded));
  process.exit(0);
}
const browser = await launch();
try {
  console.log(JSON.stringify(await { axe, offline, screenshots, speed }[mode](seeded)));
} finally {
  await browser.close();
}

/** Signs in through the form on the queue, then loads each page (the tab keeps the key). */
async function visit(page, seeded, onPage) {
  await page.goto(`${base}/review`);
  await onPage("sign-in");
  await page.getByLabel("API key or token").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForSelector(QUEUE_ROW);
  // The counters come after the rows: leaving before them would cut their request short.
  await page.waitForSelector(QUEUE_COUNTERS, { state: "attached" });
  await onPage("queue");
  await page.getByRole("link", { name: "Merge suggestions" }).click();
  await page.waitForSelector(`${CARD}`);
  await page.waitForSelector("#explanation tbody tr");
  await onPage("suggestions");
  await page.goto(`${base}/review/entities/${encodeURIComponent(seeded.acme)}`);
  await page.waitForSelector("#history tbody tr");
  await page.waitForSelector("#mentions tbody tr");
  await page.waitForSelector("#relations li a");
  await onPage("entity");
}

async function axe(seeded) {
  // The page's CSP allows no inline script; axe-core is injected by the test only.
  const context = await browser.newContext({ bypassCSP: true });
  const page = await openPage(context);
  const source = vendored.resolve("axe-core/axe.min.js");
  const pages = {};
  await visit(page, seeded, async (name) => {
    await page.addScriptTag({ path: source });
    const found = await page.evaluate(() => window.axe.run(document, { resultTypes: ["violations"] }));
    pages[name] = found.violations.map((v) => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5),
    }));
  });
  return { axe: (await page.evaluate(() => window.axe.version)), pages };
}

async function offline(seeded) {
  const context = await browser.newContext();
  const outside = [], failed = [], errors = [], violations = [], pages = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (new URL(url).origin !== origin) {
      outside.push(url);
      return route.abort("blockedbyclient");
    }
    return route.continue();
  });
  // A load the CSP stops never reaches the network (nor the route above): count those too.
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      (window.__violations = window.__violations || []).push(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  const page = await openPage(context);
  page.on("requestfailed", (request) => failed.push(`${request.url()} ${request.failure()?.errorText}`));
  page.on("response", (response) => {
    if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
  });
  await visit(page, seeded, async (name) => {
    pages.push(name);
    violations.push(...(await page.evaluate(() => window.__violations || [])));
  });
  return { pages, outside, failed, errors, violations };
}

async function screenshots(seeded) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const page = await openPage(context);
  const written = [];
  const shots = { queue: "queue.png", suggestions: "suggestion-card.png", entity: "entity-card.png" };
  await visit(page, seeded, async (name) => {
    if (!shots[name]) return;
    await page.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); });
    const path = join(extra, shots[name]);
    // The cards run past one screen: the whole page, so the waterfall and history show.
    await page.screenshot({ path, fullPage: name !== "queue" });
    written.push(path);
  });
  return { written };
}

async function speed() {
  const runs = Number(extra || 10);
  const context = await browser.newContext();
  // A signed-in tab: the key is in sessionStorage before the page's script runs. Each page
  // notes when its first row or card is in the DOM and shown (performance.now() counts from
  // the navigation's start).
  await context.addInitScript(({ credential, row, card }) => {
    sessionStorage.setItem("canon.review.credential", credential);
    const seen = () => {
      const main = document.getElementById("page");
      if (!main || main.hidden || window.__visible !== undefined) return;
      if (document.querySelector(row) || document.querySelector(card)) window.__visible = performance.now();
    };
    new MutationObserver(seen).observe(document, { childList: true, subtree: true, attributes: true });
  }, { credential: key, row: QUEUE_ROW, card: CARD });
  const page = await openPage(context);
  const timed = async (path) => {
    await page.goto(`${base}${path}`, { waitUntil: "commit" });
    await page.waitForFunction(() => window.__visible !== undefined, null, { timeout: 60000 });
    const visible = await page.evaluate(() => window.__visible);
    // Each page measured alone: the queue's counters, asked for after its rows, still run in
    // the graph engine after the row shows; the next load waits until they are done.
    await page.waitForLoadState("networkidle");
    return visible;
  };
  const out = { queue: [], suggestions: [] };
  for (let i = 0; i < runs + 2; i++) {
    // Two warm-up loads of each (the first compiles canon's page and the browser's caches).
    const queue = await timed("/review");
    const card = await timed("/review/suggestions");
    if (i >= 2) { out.queue.push(queue); out.suggestions.push(card); }
  }
  return out;
}
