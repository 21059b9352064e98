// The entity card's synonyms in Debian's chromium, driven by playwright-core (vendored by
// `make provision` under vendor/browser; CANON_BROWSER_MODULES names that folder):
//   synonyms.mjs BASE KEY ENTITY_ID TEXT [undo]
// signs in through the form on the entity's page, reads its synonym list (text, source word,
// whether a Remove button is offered), clicks the button named "Remove synonym TEXT", waits
// for that synonym to leave the list, and prints JSON for the Rust caller
// (tests/api/synonyms.rs) to check: {before, after, status, errors}. With `undo` it then
// presses z, waits for the synonym to come back, and adds {restored, undoStatus}; then adds
// the synonym "Zed Supply" through the card's form, presses z, waits for it to go, and adds
// {added, unadded}; then adds "Acme A." (a synonym the entity has), presses z, and adds
// {readdStatus, afterReadd, undoAfterReadd}: z must not remove what was there before.
import { withPage, signIn } from "./browser.mjs";

const [base, key, entityID, text, mode] = process.argv.slice(2);
console.log(JSON.stringify(await withPage(removeOne)));

/** The list as a reviewer sees it: each item's text, source word and Remove button. */
async function synonyms(page) {
  return page.locator("#synonyms li[data-synonym-id]").evaluateAll((items) => items.map((li) => ({
    text: li.querySelector(".synonym-text")?.textContent,
    source: li.querySelector(".synonym-source")?.textContent,
    remove: li.querySelector("button")?.getAttribute("aria-label") ?? null,
  })));
}

async function removeOne(page) {
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(`${base}/review/entities/${encodeURIComponent(entityID)}`);
  await signIn(page, key);
  await page.waitForSelector("#synonyms li[data-synonym-id]");
  const before = await synonyms(page);
  await page.getByRole("button", { name: `Remove synonym ${text}`, exact: true }).click();
  await page.waitForFunction((gone) => ![...document.querySelectorAll("#synonyms .synonym-text")]
    .some((span) => span.textContent === gone), text);
  const after = await synonyms(page);
  const status = await page.locator("#status").textContent();
  if (mode !== "undo") return { before, after, status, errors };
  await page.keyboard.press("z");
  await page.waitForFunction((back) => [...document.querySelectorAll("#synonyms .synonym-text")]
    .some((span) => span.textContent === back), text);
  const restored = await synonyms(page);
  const undoStatus = await page.locator("#status").textContent();
  const shown = (wanted) => [...document.querySelectorAll("#synonyms .synonym-text")]
    .some((span) => span.textContent === wanted);
  await page.locator("#synonym-text").fill("Zed Supply");
  await page.locator("#synonym-text").press("Enter");
  await page.waitForFunction(shown, "Zed Supply");
  const added = await synonyms(page);
  // The reviewer leaves the field before pressing a key (keys typed into a field are text).
  await page.evaluate(() => document.activeElement.blur());
  await page.keyboard.press("z");
  await page.waitForFunction((gone) => ![...document.querySelectorAll("#synonyms .synonym-text")]
    .some((span) => span.textContent === gone), "Zed Supply");
  const unadded = await synonyms(page);
  await page.locator("#synonym-text").fill("Acme A.");
  await page.locator("#synonym-text").press("Enter");
  await page.waitForFunction(() => document.querySelector("#status").textContent.includes("already"));
  const readdStatus = await page.locator("#status").textContent();
  await page.evaluate(() => document.activeElement.blur());
  await page.keyboard.press("z");
  await page.waitForFunction(() => document.querySelector("#status").textContent.startsWith("Nothing"));
  const undoAfterReadd = await page.locator("#status").textContent();
  const afterReadd = await synonyms(page);
  return { before, after, status, restored, undoStatus, added, unadded, readdStatus, undoAfterReadd, afterReadd, errors };
}
