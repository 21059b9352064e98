// #43's audit, blind and bulk pieces in the dashboard, driven in headless Chromium; prints
// what the page showed as JSON for the Rust test, which checks it again through REST.
// Usage: node --experimental-websocket review_audit.mjs BASE_URL CREDENTIAL MODE [ARG]
//   timeline ENTITY_ID   the entity page's History: each entry's kind, actor and text
//   blind                dismisses the open suggestion with `d` in blind mode
//   bulk BUCKET_ID       "Validate all matching" on the queue filtered to the bucket: the
//                        count the in-page dialog asks about, then Confirm
import { withPage, signIn } from "./cdp.mjs";

const [base, credential, mode, arg] = process.argv.slice(2);

const seen = await withPage(async (page) => {
  if (mode === "timeline") {
    await page.navigate(`${base}/review/entities/${encodeURIComponent(arg)}`);
    await signIn(page, credential);
    await page.until(`document.querySelectorAll("#timeline li[data-kind]").length > 0`);
    const entries = await page.evaluate(`[...document.querySelectorAll("#timeline li[data-kind]")].map((li) =>
      ({ kind: li.dataset.kind, actor: li.dataset.actor, text: li.textContent }))`);
    const dialogs = await page.evaluate(`document.querySelectorAll("dialog[open]").length`);
    return { entries, dialogs };
  }
  if (mode === "blind") {
    await page.navigate(`${base}/review/suggestions?blind=1`);
    await signIn(page, credential);
    await page.until(`!!document.querySelector("#card [data-survivor]")`);
    // Blind: the score is in the card but not shown.
    const scoreShown = await page.evaluate(`document.querySelector("[data-score]").offsetParent !== null`);
    await page.key("d");
    await page.until(`document.querySelector("#progress").textContent === "No open merge suggestions."`);
    return { scoreShown };
  }
  if (mode === "bulk") {
    await page.navigate(`${base}/review?bucket=${encodeURIComponent(arg)}`);
    await signIn(page, credential);
    await page.until(`document.querySelectorAll("#queue tbody tr[data-entity-id]").length > 0`);
    const rowsBefore = await page.evaluate(`document.querySelectorAll("#queue tbody tr[data-entity-id]").length`);
    await page.evaluate(`document.querySelector("[data-action=all-validate]").click(); true`);
    await page.until(`document.querySelector("#confirm").open`);
    const question = await page.evaluate(`document.querySelector("#confirm-text").textContent`);
    await page.evaluate(`document.querySelector("#confirm button[value=confirm]").click(); true`);
    await page.until(`document.querySelector("#status").textContent.includes("changed")`);
    const status = await page.evaluate(`document.querySelector("#status").textContent`);
    await page.until(`document.querySelectorAll("#queue tbody tr[data-entity-id]").length === 0`);
    return { rowsBefore, question, status };
  }
  throw new Error(`unknown mode ${mode}`);
});
console.log(JSON.stringify(seen));
