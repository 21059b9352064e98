// #43's audit, blind and bulk pieces in the dashboard, driven in Debian's chromium with
// playwright-core (browser.mjs); prints what the page showed as JSON for the Rust test, which
// checks it again through REST.
// Usage: CANON_BROWSER_MODULES=vendor/browser node review_audit.mjs BASE_URL CREDENTIAL MODE [ARG]
//   timeline ENTITY_ID   the entity page's History: each entry's kind, actor and text
//   blind                dismisses the open suggestion with `d` in blind mode
//   bulk BUCKET_ID       "Validate all matching" on the queue filtered to the bucket: the
//                        count the in-page dialog asks about, then Confirm
import { signIn, until, withPage } from "./browser.mjs";

const [base, credential, mode, arg] = process.argv.slice(2);
const ROW = "#queue tbody tr[data-entity-id]";

const seen = await withPage(async (page) => {
  if (mode === "timeline") {
    await page.goto(`${base}/review/entities/${encodeURIComponent(arg)}`);
    await signIn(page, credential);
    await page.waitForSelector("#timeline li[data-kind]", { state: "attached" });
    const entries = await page.$$eval("#timeline li[data-kind]", (list) =>
      list.map((li) => ({ kind: li.dataset.kind, actor: li.dataset.actor, text: li.textContent })));
    const dialogs = await page.locator("dialog[open]").count();
    return { entries, dialogs };
  }
  if (mode === "blind") {
    await page.goto(`${base}/review/suggestions?blind=1`);
    await signIn(page, credential);
    await page.waitForSelector("#card [data-survivor]", { state: "attached" });
    // Blind: the score is in the card but not shown.
    const scoreShown = await page.$eval("[data-score]", (el) => el.offsetParent !== null);
    await page.keyboard.press("d");
    await until(page, () => document.querySelector("#progress").textContent === "No open merge suggestions.");
    return { scoreShown };
  }
  if (mode === "bulk") {
    await page.goto(`${base}/review?bucket=${encodeURIComponent(arg)}`);
    await signIn(page, credential);
    await page.waitForSelector(ROW, { state: "attached" });
    const rowsBefore = await page.locator(ROW).count();
    await page.locator("[data-action=all-validate]").click();
    await page.waitForSelector("#confirm[open]");
    const question = await page.locator("#confirm-text").textContent();
    await page.locator("#confirm button[value=confirm]").click();
    await until(page, () => document.querySelector("#status").textContent.includes("changed"));
    const status = await page.locator("#status").textContent();
    await until(page, (row) => document.querySelectorAll(row).length === 0, ROW);
    return { rowsBefore, question, status };
  }
  throw new Error(`unknown mode ${mode}`);
});
console.log(JSON.stringify(seen));
