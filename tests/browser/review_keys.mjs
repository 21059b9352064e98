// Drives /review in Debian's chromium with playwright-core (browser.mjs): signs in with the key
// given, presses `v` on the first row, then prints the page's counters and rows as JSON for
// the Rust test to check (and check again through REST); and with `undo`, presses `z` after
// it; with `suggestion`, accepts a merge suggestion by `a`. Keys only, as a reviewer would.
// Usage: CANON_BROWSER_MODULES=vendor/browser node review_keys.mjs BASE_URL API_KEY [undo|suggestion]
import { signIn, until, withPage } from "./browser.mjs";

const [base, key, mode] = process.argv.slice(2);
const LEFT = "[data-count=left] strong";
const ROW = "#queue tbody tr[data-entity-id]";

const seen = await withPage(async (page) => {
  await page.goto(`${base}/review${mode === "suggestion" ? "/suggestions" : ""}`);
  await signIn(page, key);
  if (mode === "suggestion") {
    // The card: the why table and the waterfall drawn, then `a` accepts the merge.
    await page.waitForSelector("svg.waterfall rect", { state: "attached" });
    await page.waitForSelector("#explanation tbody tr", { state: "attached" });
    const fields = await page.$$eval("#explanation tbody tr", (rows) => rows.map((r) => r.textContent));
    const survivor = await page.$eval("[data-survivor]", (el) => el.dataset.survivor);
    await page.keyboard.press("a");
    await until(page, () => document.querySelector("#progress").textContent === "No open merge suggestions.");
    return { fields, survivor };
  }
  // The counters come after the rows (the page asks for them once the rows are shown).
  await page.waitForSelector(ROW, { state: "attached" });
  await page.waitForSelector(LEFT, { state: "attached" });
  const count = () => page.$eval(LEFT, (el) => el.textContent);
  const before = await count();
  const first = await page.$eval("#queue tbody tr", (row) => row.dataset.entityId);
  await page.keyboard.press("v");
  await until(page, ([left, was]) => document.querySelector(left).textContent !== was, [LEFT, before]);
  const after = await count();
  const rows = await page.$$eval(ROW, (list) => list.map((r) => r.dataset.entityId));
  if (mode === "undo") {
    await page.keyboard.press("z");
    await until(page, ([left, was]) => document.querySelector(left).textContent === was, [LEFT, before]);
  }
  const last = await count();
  return { before, after, last, validated: first, rows };
});
console.log(JSON.stringify(seen));
