// The entity card's forms before the card has loaded, in Debian's chromium (playwright-core,
// vendored under vendor/browser):
//   card_loading.mjs BASE KEY ENTITY_ID TYPE_ID
// holds back the card's read of the entity (GET /v3/entities/ENTITY_ID), signs in, sends the
// "Assigned type" form with TYPE_ID and waits for the status line; then lets the read through
// and waits for the card. Prints JSON for tests/api/entity_types.rs: {early, patches, facts,
// errors}: what the status line said, how many PATCHes the page sent, the card's facts.
import { withPage, signIn, until } from "./browser.mjs";

const [base, key, entityID, typeID] = process.argv.slice(2);
console.log(JSON.stringify(await withPage(async (page) => {
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  let patches = 0;
  page.on("request", (request) => { if (request.method() === "PATCH") patches += 1; });
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  const entityPath = `/v3/entities/${encodeURIComponent(entityID)}`;
  await page.route((url) => url.pathname === entityPath, async (route) => {
    if (route.request().method() === "GET") await held;
    await route.continue();
  });
  await page.goto(`${base}/review/entities/${encodeURIComponent(entityID)}`);
  await signIn(page, key);
  await page.locator("#new-type").fill(typeID);
  await page.locator("#new-type").press("Enter");
  await until(page, () => document.querySelector("#status").textContent.includes("loading"));
  const early = await page.locator("#status").textContent();
  release();
  await until(page, (id) => document.querySelector("#facts").textContent.startsWith(id), entityID);
  const facts = await page.locator("#facts").textContent();
  return { early, patches, facts, errors };
})));
