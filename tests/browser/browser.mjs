// Debian's chromium driven by playwright-core, shared by the browser tests: the package is
// vendored by `make provision` under vendor/browser (CANON_BROWSER_MODULES names that folder),
// so it is loaded from there, not from a package.json next to the scripts.
import { createRequire } from "node:module";
import { join } from "node:path";

const modules = process.env.CANON_BROWSER_MODULES;
if (!modules) throw new Error("CANON_BROWSER_MODULES must name vendor/browser (make provision)");
/** `require` resolving in vendor/browser/node_modules (playwright-core, axe-core). */
export const vendored = createRequire(join(modules, "node_modules") + "/");
const { chromium } = vendored("playwright-core");

/** A headless chromium (CANON_CHROMIUM, else /usr/bin/chromium); the caller closes it. */
export function launch() {
  return chromium.launch({
    executablePath: process.env.CANON_CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
  });
}

/** How long a wait may take before the script fails. Generous: CI runs these beside the rest of
 * the suite, on Neo4j too, on a machine that was once twice as slow as usual (a browser test
 * failed there with 15 s waits); a test that fails only when slow would test speed, and no
 * pass/fail test does. */
export const WAIT_MS = 90000;

/** A new page of `context` whose waits last WAIT_MS. */
export async function openPage(context) {
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT_MS);
  page.setDefaultNavigationTimeout(WAIT_MS);
  return page;
}

/** Calls `run(page)` with a fresh page, and always closes the browser after. */
export async function withPage(run) {
  const browser = await launch();
  try {
    return await run(await openPage(await browser.newContext()));
  } finally {
    await browser.close();
  }
}

/** Waits until `predicate(arg)` holds in the page; a timeout names it and the status line. */
export async function until(page, predicate, arg) {
  try {
    await page.waitForFunction(predicate, arg, { timeout: WAIT_MS });
  } catch (err) {
    const status = await page.locator("#status").textContent().catch(() => null);
    throw new Error(`timed out waiting for ${predicate} (${JSON.stringify(arg)}); status line: ${status}\n${err.message}`);
  }
}

/** Signs in through the form, as a reviewer would, and waits for the page behind it. */
export async function signIn(page, credential) {
  await page.getByLabel("API key or token").fill(credential);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForSelector("#page:not([hidden])");
}
