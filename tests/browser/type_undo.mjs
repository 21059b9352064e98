// The entity card's type change taken back with z, in Debian's chromium (playwright-core,
// vendored under vendor/browser):
//   type_undo.mjs BASE KEY ENTITY_ID TYPE_ID
// signs in on the entity's page, waits for the card, assigns TYPE_ID through the "Assigned type" form, waits for
// the card to say so, leaves the field, presses z, waits for "Undone:", and prints JSON for
// tests/api/entity_types.rs: {changed, undone, errors}.
import { withPage, signIn, until } from "./browser.mjs";

const [base, key, entityID, typeID] = process.argv.slice(2);
console.log(JSON.stringify(await withPage(async (page) => {
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  await page.goto(`${base}/review/entities/${encodeURIComponent(entityID)}`);
  await signIn(page, key);
  // The card is shown once its facts name the entity; a form sent before that has nothing to act on.
  await until(page, (id) => document.querySelector("#facts").textContent.startsWith(id), entityID);
  await page.locator("#new-type").fill(typeID);
  await page.locator("#new-type").press("Enter");
  await until(page, () => document.querySelector("#status").textContent.startsWith("Type changed"));
  const changed = await page.locator("#status").textContent();
  await page.evaluate(() => document.activeElement.blur());
  await page.keyboard.press("z");
  await until(page, () => document.querySelector("#status").textContent.startsWith("Undone:"));
  const undone = await page.locator("#status").textContent();
  return { changed, undone, errors };
})));
