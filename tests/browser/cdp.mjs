// A headless Chromium driven over the DevTools protocol with node's own WebSocket (no npm
// package): `withPage(run)` starts Chromium with a throwaway profile, calls `run(page)` with
// `{ send, evaluate, until, key, navigate }`, and always stops Chromium and removes the profile.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function withPage(run) {
  const profile = mkdtempSync(join(tmpdir(), "canon-cdp-"));
  const chromium = spawn("/usr/bin/chromium", ["--headless", "--no-sandbox", "--disable-gpu",
    "--disable-dev-shm-usage", "--no-first-run", `--user-data-dir=${profile}`,
    "--remote-debugging-port=0", "about:blank"], { stdio: ["ignore", "ignore", "pipe"] });
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
    const ws = new WebSocket(targets.find((t) => t.type === "page").webSocketDebuggerUrl);
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
      for (let i = 0; i < 150; i++) { if (await evaluate(expression)) return; await sleep(100); }
      const status = await evaluate(`document.querySelector("#status") && document.querySelector("#status").textContent`);
      throw new Error(`timed out waiting for ${expression}; status line: ${status}`);
    };
    const key = (k) => send("Input.dispatchKeyEvent", { type: "keyDown", key: k, text: k });
    const navigate = async (url) => {
      await send("Page.navigate", { url });
      await until(`document.readyState === "complete" && !!document.querySelector("#page")`);
    };
    await send("Page.enable");
    try {
      return await run({ send, evaluate, until, key, navigate });
    } finally {
      ws.close();
    }
  } finally {
    // The profile is removed once Chromium has exited and stopped writing to it.
    const exited = chromium.exitCode !== null ? Promise.resolve() : new Promise((r) => chromium.once("exit", r));
    chromium.kill();
    await Promise.race([exited, sleep(5000)]);
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 300 });
    } catch (err) {
      console.error(`could not remove the browser profile ${profile}: ${err.message}`);
    }
  }
}

/** Signs in through the form, as a reviewer would. */
export async function signIn(page, credential) {
  await page.until(`!!document.querySelector("#credential")`);
  await page.evaluate(`document.querySelector("#credential").value = ${JSON.stringify(credential)}; document.querySelector("#sign-in button").click(); true`);
  await page.until(`!document.querySelector("#page").hidden`);
}
