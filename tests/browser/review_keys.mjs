// Drives /review in headless Chromium over the DevTools protocol (node's WebSocket, no npm
// package): signs in with the key given, presses `v` on the first row, then prints the page's
// counters and rows as JSON for the Rust test to check (and check again through REST);
// and with `undo`, presses `z` after it; with `suggestion`, accepts a merge suggestion by `a`.
// Usage: node --experimental-websocket review_keys.mjs BASE_URL API_KEY [undo|suggestion]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [base, key, mode] = process.argv.slice(2);
const profile = mkdtempSync(join(tmpdir(), "canon-cdp-"));
const chromium = spawn("/usr/bin/chromium", ["--headless", "--no-sandbox", "--disable-gpu",
  "--disable-dev-shm-usage", "--no-first-run", `--user-data-dir=${profile}`,
  "--remote-debugging-port=0", "about:blank"], { stdio: ["ignore", "ignore", "pipe"] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
try {
  const browserUrl = await new Promise((resolve, reject) => {
    let text = "";
    chromium.stderr.on("data", (chunk) => {
      text += chunk;
      const found = text.match(/DevTools listening on (ws:\/\/\S+)/);
      if (found) resolve(found[1]);
    });
    setTimeout(() => reject(new Error(`no DevTools URL: ${text}`)), 15000);
  });
  const port = new URL(browserUrl).port;
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const page = targets.find((t) => t.type === "page");
  const ws = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise((r) => ws.addEventListener("open", r));
  let next = 0;
  const pending = new Map();
  ws.addEventListener("message", (event) => {
    const message = JSON.parse(event.data);
    if (message.id && pending.has(message.id)) { pending.get(message.id)(message); pending.delete(message.id); }
  });
  const send = (method, params = {}) => new Promise((resolve) => {
    const id = ++next;
    pending.set(id, resolve);
    ws.send(JSON.stringify({ id, method, params }));
  });
  const evaluate = async (expression) =>
    (await send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true })).result.result.value;
  const until = async (expression) => {
    for (let i = 0; i < 100; i++) { if (await evaluate(expression)) return; await sleep(100); }
    const status = await evaluate(`document.querySelector("#status").textContent`);
    throw new Error(`timed out waiting for ${expression}; status line: ${status}`);
  };
  await send("Page.enable");
  await send("Page.navigate", { url: `${base}/review${mode === "suggestion" ? "/suggestions" : ""}` });
  await until(`document.readyState === "complete" && !!document.querySelector("#credential")`);
  // Sign in through the form, as a reviewer would.
  await evaluate(`document.querySelector("#credential").value = ${JSON.stringify(key)}; document.querySelector("#sign-in button").click(); true`);
  if (mode === "suggestion") {
    // The card: the why table and the waterfall drawn, then `a` accepts the merge.
    await until(`!!document.querySelector("svg.waterfall rect") && !!document.querySelector("#explanation tbody tr")`);
    const fields = await evaluate(`[...document.querySelectorAll("#explanation tbody tr")].map((r) => r.textContent)`);
    const survivor = await evaluate(`document.querySelector("[data-survivor]").dataset.survivor`);
    await send("Input.dispatchKeyEvent", { type: "keyDown", key: "a", text: "a" });
    await until(`document.querySelector("#progress").textContent === "No open merge suggestions."`);
    console.log(JSON.stringify({ fields, survivor }));
  } else {
    // The counters come after the rows (the page asks for them once the rows are shown).
    await until(`document.querySelectorAll("#queue tbody tr[data-entity-id]").length > 0 && !!document.querySelector("[data-count=left] strong")`);
    const before = await evaluate(`document.querySelector("[data-count=left] strong").textContent`);
    const first = await evaluate(`document.querySelector("#queue tbody tr").dataset.entityId`);
    await send("Input.dispatchKeyEvent", { type: "keyDown", key: "v", text: "v" });
    await until(`document.querySelector("[data-count=left] strong").textContent !== ${JSON.stringify(before)}`);
    const after = await evaluate(`document.querySelector("[data-count=left] strong").textContent`);
    const rows = await evaluate(`[...document.querySelectorAll("#queue tbody tr[data-entity-id]")].map((r) => r.dataset.entityId)`);
    if (mode === "undo") {
      await send("Input.dispatchKeyEvent", { type: "keyDown", key: "z", text: "z" });
      await until(`document.querySelector("[data-count=left] strong").textContent === ${JSON.stringify(before)}`);
    }
    const last = await evaluate(`document.querySelector("[data-count=left] strong").textContent`);
    console.log(JSON.stringify({ before, after, last, validated: first, rows }));
  }
  ws.close();
} finally {
  // The profile is removed once Chromium has exited and stopped writing to it.
  const exited = chromium.exitCode !== null ? Promise.resolve() : new Promise((r) => chromium.once("exit", r));
  chromium.kill();
  await Promise.race([exited, sleep(5000)]);
  // Chromium's helper processes may still write to the profile after the main one exits
  // (CI once saw ENOTEMPTY): a leftover temp folder is not the page's failure.
  try {
    rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 300 });
  } catch (err) {
    console.error(`could not remove the browser profile ${profile}: ${err.message}`);
  }
}
