// UI test of the operator's console (Farmhand: Open Console) in the packaged extension, in code-server: each page
// opens and shows the test farm; a filter finds a dead letter, its page shows its story, Retry sends it back to the
// queue; a worker is revoked after the confirmation; an enrollment token is made and shown once. Screenshots go to
// test/artifacts/ui-console/console-*.png. Run through test/ui/run-ui-tests.mjs.
import * as assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import { after, afterEach, before, describe, it } from "mocha";
import { launchChromium } from "../harness/browser.mjs";
import { installExtension, prepareProfile, requireInstalledCodeServer, startCodeServer } from "../harness/codeServer.mjs";
import { artifactsDir, extensionDir } from "../harness/paths.mjs";
import { onInterrupt } from "../harness/process.mjs";
import { startTestFarm } from "../harness/testFarm.mjs";
import { packageExtension } from "./packaging.mjs";
import { activityBarItem, farmWelcome, quickInputBox, quickInputTitle, treeRow, waitForWorkbench } from "./workbench.mjs";

// A folder of its own: the main UI test empties test/artifacts/ui/ when it starts.
const screenshots = join(artifactsDir, "ui-console");
const UI_TIMEOUT = 30_000;

/**
 * A dead letter on the farm: submitted, claimed by the seeded worker and failed for good, with whatever else its
 * claims take (every job this test submits has one attempt, so those die too).
 */
async function deadLetter(farm) {
  const http = new ConvexHttpClient(farm.url);
  const jobId = await http.mutation(anyApi.jobs.submit, { clientKey: farm.clientKey, type: "demo.echo", payload: { say: "hi" }, maxAttempts: 1 });
  for (let tries = 0; tries < 50; tries++) {
    const claims = await http.mutation(anyApi.workers.claim, { apiKey: farm.workerKey, capabilities: ["demo.echo"], max: 1 });
    for (const claim of claims) {
      await http.mutation(anyApi.workers.fail, { apiKey: farm.workerKey, leaseId: claim.leaseId, error: "the printer is on fire", retryable: false });
    }
    if ((await http.query(anyApi.jobs.get, { clientKey: farm.clientKey, jobId })).status === "dead") return jobId;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`could not make job ${jobId} a dead letter`);
}

/** The console's document: the editor webview whose page has the console's tabs. */
async function consoleFrame(page) {
  const deadline = Date.now() + UI_TIMEOUT;
  while (Date.now() < deadline) {
    const outer = page.frameLocator('iframe.webview[src*="extensionId=farmhand.farmhand"]');
    const count = await page.locator('iframe.webview[src*="extensionId=farmhand.farmhand"]').count();
    for (let i = 0; i < count; i++) {
      const inner = outer.nth(i).frameLocator("#active-frame");
      if ((await inner.locator("#tabs").count()) > 0) return inner;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error("the console's webview never appeared");
}

describe("the operator's console", function () {
  this.timeout(180_000);
  let root;
  let server;
  let farm;
  let browser;
  let page;
  let frame;
  let deadJobId;
  const browserLog = [];
  let removeInterruptHandler = () => {};

  const cleanUp = async () => {
    await browser?.close();
    await server?.stop();
    await farm?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
    browser = server = farm = root = undefined;
  };

  before(async () => {
    removeInterruptHandler = onInterrupt(cleanUp);
    requireInstalledCodeServer();
    mkdirSync(screenshots, { recursive: true });
    const vsix = packageExtension(extensionDir);
    root = mkdtempSync(join(tmpdir(), "farmhand-console-ui-"));
    farm = await startTestFarm();
    deadJobId = await deadLetter(farm);
    // runApps answered in the user settings: the join asks nothing about apps
    const profile = prepareProfile(root, { "farmhand.allowRemoteDonation": true, "farmhand.runApps": false });
    installExtension(profile, vsix);
    server = await startCodeServer(profile, { onLog: () => {} });
    browser = await launchChromium(profile.chromiumDir);
    page = await browser.context.newPage();
    page.on("console", (message) => browserLog.push(`${message.type()}: ${message.text()}`));
    await page.goto(`${server.origin}/?folder=${encodeURIComponent(profile.workspaceDir)}`);
    await waitForWorkbench(page, UI_TIMEOUT);
  });

  afterEach(async function () {
    if (this.currentTest?.state !== "failed" || !page) return;
    const name = this.currentTest.title.replace(/[^\w]+/g, "-").slice(0, 60);
    await page.screenshot({ path: join(screenshots, `console-failed-${name}.png`) }).catch(() => {});
  });

  after(async () => {
    writeFileSync(join(screenshots, "console-browser.log"), browserLog.join("\n") + "\n");
    await cleanUp();
    removeInterruptHandler();
  });

  it("joins with an operator's token and opens Farmhand: Open Console on the Overview page", async () => {
    await activityBarItem(page).click();
    await farmWelcome(page).getByRole("button", { name: "Join a Farm…" }).click();
    await answerQuickInput(page, /Join a Farm \(1\/2\)/, farm.url);
    await answerQuickInput(page, /Join a Farm \(2\/2\)/, farm.tokens.operator);
    await treeRow(page, "This machine").waitFor({ timeout: UI_TIMEOUT });
    await runCommand(page, "Farmhand: Open Console");
    frame = await consoleFrame(page);
    await assertText(frame.locator("#counts"), /Pending\s*Running\s*Succeeded\s*Dead\s*Canceled\s*0\s*0\s*0\s*1\s*0/);
    await assertText(frame.locator("#farm-figures"), /Workers online/);
    await page.screenshot({ path: join(screenshots, "console-1-overview.png") });
  });

  it("Jobs: the dead filter finds the dead letter; its page tells its story; Retry puts it back in the queue", async () => {
    await frame.locator('#tabs button[data-page="jobs"]').click();
    await frame.locator("#status-filter").selectOption("dead");
    await assertText(frame.locator("#jobs"), new RegExp(`${deadJobId.slice(-8)}\\s*demo\\.echo\\s*dead`));
    await frame.locator("#jobs button.link").first().click();
    await assertText(frame.locator("#timeline"), /submitted[\s\S]*claimed\s*test-worker-1[\s\S]*failed[\s\S]*dead/);
    await assertText(frame.locator("#job"), /the printer is on fire/);
    await page.screenshot({ path: join(screenshots, "console-2-job.png") });
    await frame.locator("#retry-job").click();
    await assertText(frame.locator("#notice"), /Retried/);
    await assertText(frame.locator("#job h2"), /demo\.echo · pending/);
    await assertText(frame.locator("#jobs"), /No jobs match|^Job\s*Type\s*Status\s*Attempt\s*Submitted\s*Error$/);
  });

  it("Jobs: Retry All Dead… asks first, then retries every dead letter in scheduled batches and says how many", async () => {
    await deadLetter(farm);
    await deadLetter(farm);
    await assertText(frame.locator("#jobs"), /dead[\s\S]*dead/);
    const dead = await frame.locator("#jobs tbody tr").count();
    await frame.locator("#bulk-retry").click();
    await page.locator(".monaco-dialog-box").getByRole("button", { name: "Go Ahead" }).click();
    await assertText(frame.locator("#bulk-status"), new RegExp(`retry: ${dead} job\\(s\\) changed of ${dead} looked at — done`));
    await assertText(frame.locator("#jobs"), /^Job\s*Type\s*Status\s*Attempt\s*Submitted\s*Error$/);
    await page.screenshot({ path: join(screenshots, "console-2b-bulk-retry.png") });
  });

  it("Workers: every worker with its state; Revoke… asks first, then revokes", async () => {
    await frame.locator('#tabs button[data-page="workers"]').click();
    await assertText(frame.locator("#workers"), /test-worker-1\s*(online|offline)/);
    await assertText(frame.locator("#workers"), /\(this machine\)/);
    await assertText(frame.locator("#leaderboard-week"), /Worker\s*CPU given\s*Jobs/);
    await page.screenshot({ path: join(screenshots, "console-3-workers.png") });
    await frame.locator("#workers button", { hasText: "Revoke…" }).first().click();
    await page.locator(".monaco-dialog-box").getByRole("button", { name: "Revoke" }).click();
    await assertText(frame.locator("#workers"), /test-worker-1\s*revoked/);
  });

  it("Access: creates an enrollment token, shown once with a copy button, and lists tokens and keys", async () => {
    await frame.locator('#tabs button[data-page="access"]').click();
    await frame.locator("#token-capabilities").fill("demo.echo, ollama:*");
    await frame.locator("#token-slots").fill("3");
    await frame.getByRole("button", { name: "Create Enrollment Token" }).click();
    const token = frame.locator("#token-value");
    await token.waitFor({ timeout: UI_TIMEOUT });
    assert.match(await token.inputValue(), /^fh_e_[A-Za-z0-9_-]{43}$/);
    await assertText(frame.locator("#enrollments"), /open\s*demo\.echo, ollama:\*\s*3/);
    await assertText(frame.locator("#client-keys"), /test client/);
    await page.screenshot({ path: join(screenshots, "console-4-access.png") });
  });
});

async function runCommand(page, title) {
  await page.keyboard.press("F1");
  await quickInputBox(page).fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row").filter({ hasText: title }).first().waitFor({ timeout: UI_TIMEOUT });
  await quickInputBox(page).press("Enter");
}

async function answerQuickInput(page, title, answer) {
  await quickInputTitle(page).filter({ hasText: title }).waitFor({ timeout: UI_TIMEOUT });
  const input = quickInputBox(page);
  await input.fill(answer);
  await input.press("Enter");
}

/** Waits up to `timeout` for the locator's text to match, then fails showing the text it last had. */
async function assertText(locator, expected, timeout = UI_TIMEOUT) {
  const deadline = Date.now() + timeout;
  let text = "";
  while (Date.now() < deadline) {
    text = (await locator.textContent({ timeout: 1_000 }).catch(() => "")) ?? "";
    if (expected.test(text)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.match(text, expected);
}
