// What both UI suites start with: the test farm, a fresh code-server profile with the packaged .vsix installed and
// the given user settings, headless Chromium on the workbench, and one stop() that ends them all (also on Ctrl-C);
// plus the checks and palette steps both suites use.
import * as assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchChromium } from "../harness/browser.mjs";
import { installExtensionAsync, prepareProfile, requireInstalledCodeServer, startCodeServer } from "../harness/codeServer.mjs";
import { onInterrupt } from "../harness/process.mjs";
import { startTestFarm } from "../harness/testFarm.mjs";
import { quickInputBox, quickInputTitle, waitForWorkbench } from "./workbench.mjs";

export const UI_TIMEOUT = 30_000;

/**
 * Starts a session; resolves with `{ farm, profile, server, page, serverLog, browserLog, stop }`. On any failure on the
 * way, what was started is stopped before the error is thrown. `env(farm)`: variables for code-server (and so the
 * extension host), given the farm (provisioning, as `npm start` does).
 */
export async function startUiSession({ vsix, settings, machineOnly, name, env = () => ({}) }) {
  requireInstalledCodeServer();
  const session = { serverLog: [], browserLog: [] };
  let root;
  let browser;
  const stop = async () => {
    await Promise.all([browser?.close(), session.server?.stop(), session.farm?.stop()]);
    if (root) rmSync(root, { recursive: true, force: true });
    browser = session.server = session.farm = root = undefined;
  };
  const removeInterruptHandler = onInterrupt(stop);
  session.stop = async () => {
    await stop();
    removeInterruptHandler();
  };
  try {
    root = mkdtempSync(join(tmpdir(), `farmhand-${name}-`));
    session.profile = prepareProfile(root, settings, machineOnly);
    // Steps that do not need each other run together: the farm and the install, then code-server and Chromium.
    await allStarted([startTestFarm().then((farm) => (session.farm = farm)), installExtensionAsync(session.profile, vsix)]);
    await allStarted([
      startCodeServer(session.profile, { env: env(session.farm), onLog: (line) => session.serverLog.push(line) }).then((server) => (session.server = server)),
      launchChromium(session.profile.chromiumDir).then((launched) => (browser = launched)),
    ]);
    session.page = await browser.context.newPage();
    session.page.on("console", (message) => session.browserLog.push(`${message.type()}: ${message.text()}`));
    await session.page.goto(`${session.server.origin}/?folder=${encodeURIComponent(session.profile.workspaceDir)}`);
    await waitForWorkbench(session.page, UI_TIMEOUT);
    return session;
  } catch (error) {
    await session.stop();
    throw error;
  }
}

/** Waits for every step, so a failed one leaves nothing half started behind; then throws the first failure. */
async function allStarted(steps) {
  const failed = (await Promise.allSettled(steps)).find((step) => step.status === "rejected");
  if (failed) throw failed.reason;
}

/** A failed test's screenshot, named after it, in `dir`. */
export async function screenshotFailure(test, page, dir, prefix = "") {
  if (test?.state !== "failed" || !page) return;
  const name = test.title.replace(/[^\w]+/g, "-").slice(0, 60);
  await page.screenshot({ path: join(dir, `${prefix}failed-${name}.png`) }).catch(() => {});
}

/** Runs a command from the command palette by its title. */
export async function runCommand(page, title) {
  await page.keyboard.press("F1");
  await quickInputBox(page).fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row").filter({ hasText: title }).first().waitFor({ timeout: UI_TIMEOUT });
  await quickInputBox(page).press("Enter");
}

/** Closes every notification toast (they cover the page in screenshots). */
export async function clearNotifications(page) {
  await page.keyboard.press("F1");
  await quickInputBox(page).fill(">Notifications: Clear All Notifications");
  await page.locator(".quick-input-list .monaco-list-row").filter({ hasText: "Clear All Notifications" }).first().waitFor({ timeout: UI_TIMEOUT });
  await quickInputBox(page).press("Enter");
  await page.locator(".notification-toast").first().waitFor({ state: "detached", timeout: UI_TIMEOUT }).catch(() => {});
}

/** Types `answer` into the quick input once its title matches, and presses Enter. */
export async function answerQuickInput(page, title, answer) {
  await quickInputTitle(page).filter({ hasText: title }).waitFor({ timeout: UI_TIMEOUT });
  const input = quickInputBox(page);
  await input.fill(answer);
  await input.press("Enter");
}

/**
 * Waits up to `timeout` for the locator's text to match `expected` (a RegExp, or a predicate on the text), then fails
 * showing the text it last had.
 */
/** Waits until `locator` matches exactly `count` elements (a table re-rendered by a live update settles first). */
export async function assertCount(locator, count, timeout = UI_TIMEOUT) {
  const deadline = Date.now() + timeout;
  let seen = await locator.count();
  while (seen !== count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    seen = await locator.count();
  }
  assert.equal(seen, count, `expected ${count} element(s), found ${seen}`);
}

export async function assertText(locator, expected, timeout = UI_TIMEOUT) {
  const matches = typeof expected === "function" ? expected : (text) => expected.test(text);
  const deadline = Date.now() + timeout;
  let text = "";
  const seen = new Set();
  while (Date.now() < deadline) {
    // A short wait per read: an element that comes and goes (a running job's row) must not stall the loop.
    text = (await locator.textContent({ timeout: 1_000 }).catch(() => "")) ?? "";
    if (matches(text)) return;
    if (text) seen.add(text);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const history = seen.size > 0 ? `; texts seen meanwhile: ${JSON.stringify([...seen].slice(-10))}` : "";
  if (typeof expected === "function") assert.fail(`the text never met ${expected}; last: ${JSON.stringify(text)}${history}`);
  assert.match(text, expected, `${JSON.stringify(text)} does not match ${expected}${history}`);
}
