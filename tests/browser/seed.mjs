// A small, realistic review graph seeded through canon's REST API, as a tenant's client would:
// companies and people with synonyms, mentions in documents (with pages and sections),
// relations, one recorded merge (so an entity has a history) and merge suggestions (refresh).
// Shared by the dashboard's browser tests and the README's screenshots (pages.mjs).

async function call(base, key, method, path, body) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { "x-api-key": key, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const ENTITIES = [
  { canonical: "Acme Anvils Inc.", type: "Company", synonyms: ["ACME", "Acme Anvils"], description: "Maker of anvils and rocket skates" },
  { canonical: "Acme Anvil Company", type: "Company" },
  { canonical: "Globex Corporation", type: "Company", synonyms: ["Globex"] },
  { canonical: "Initech Software", type: "Company", synonyms: ["Initech"] },
  { canonical: "Initech Software Group", type: "Company" },
  { canonical: "Umbrella Pharmaceuticals", type: "Company" },
  { canonical: "Umbrella Pharmaceutical", type: "Company" },
  { canonical: "Wayne Enterprises", type: "Company" },
  { canonical: "Stark Industries", type: "Company" },
  { canonical: "Ada Lovelace", type: "Person", synonyms: ["A. Lovelace"] },
  { canonical: "Grace Hopper", type: "Person" },
  { canonical: "Katherine Johnson", type: "Person" },
  { canonical: "Zürich", type: "Place" },
];

/** Seeds the graph; returns the entity IDs by canonical name and the merged-into entity. */
export async function seedGraph(base, key) {
  const seeded = await call(base, key, "POST", "/v3/entities/bulk", { entities: ENTITIES, onConflict: "merge" });
  const ids = {};
  for (const row of seeded.results) ids[row.canonical] = row.entityID;
  const acme = ids["Acme Anvils Inc."];
  const mentions = [
    [acme, "ACME", "annual-report-2025.pdf", 4, "Suppliers"],
    [acme, "Acme Anvils", "annual-report-2025.pdf", 12, "Risk factors"],
    [acme, "Acme Anvils Inc.", "contract-2024-117.pdf", 1, "Parties"],
    [ids["Globex Corporation"], "Globex", "annual-report-2025.pdf", 4, "Customers"],
    [ids["Ada Lovelace"], "A. Lovelace", "board-minutes-2025-03.pdf", 2, "Attendees"],
  ];
  for (const [entityID, surface, referenceID, page, sectionLabel] of mentions) {
    await call(base, key, "POST", "/v3/mentions", { entityID, surface, referenceID, page, sectionLabel });
  }
  const relations = [
    [acme, ids["Globex Corporation"], "supplies"],
    [ids["Ada Lovelace"], acme, "board_member_of"],
    [acme, ids["Zürich"], "headquartered_in"],
    [ids["Wayne Enterprises"], acme, "customer_of"],
  ];
  for (const [sourceEntityID, targetEntityID, relationType] of relations) {
    await call(base, key, "POST", "/v3/relations", { sourceEntityID, targetEntityID, relationType });
  }
  // A merge a reviewer made earlier: Acme's history lists it with "Undo merge".
  // (Seeded a second time on one tenant, the row resolves to Acme already: nothing to merge.)
  if (ids["Acme Anvil Company"] !== acme) {
    await call(base, key, "POST", `/v3/entities/${acme}/merge`, { entityIDs: [ids["Acme Anvil Company"]] });
  }
  const refreshed = await call(base, key, "POST", "/v3/merge-suggestions/refresh", {});
  return { ids, acme, suggested: refreshed.suggested };
}
