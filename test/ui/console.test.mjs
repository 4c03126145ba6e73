// UI test of the operator's console (Farmhand: Open Console) in the packaged extension, in code-server. A donor whose
// key may not manage the farm is told so; an operator's machine opens each page: the Overview shows the test farm;
// the Jobs page filters by status, type and batch id (and says when a combination was checked on one page only), a
// dead letter's page tells its story and Retry sends it back; a bulk retry acts on the filter; a worker is revoked
// after the confirmation; an enrollment token is made, shown once, and revoked; a client key is revoked. No CSP
// violation on the way. Screenshots go to test/artifacts/ui-console/ (FARMHAND_UPDATE_SCREENSHOT=1 copies each page's
// to docs/screenshots/console-<page>.png). Run through test/ui/run-ui-tests.mjs.
import * as assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import { after, afterEach, before, describe, it } from "mocha";
import { artifactsDir, extensionDir, repoDir } from "../harness/paths.mjs";
import { farmhandLog } from "./farm.mjs";
import { packageExtension } from "./packaging.mjs";
import { answerQuickInput, assertCount, assertText, clearNotifications, runCommand, screenshotFailure, startUiSession, UI_TIMEOUT } from "./session.mjs";
import { activityBarItem, farmWelcome, treeRow } from "./workbench.mjs";

// A folder of its own: the main UI test empties test/artifacts/ui/ when it starts.
const screenshots = join(artifactsDir, "ui-console");
const BATCH = "nightly-7";
const EXTERNAL_ID = "order-12";
/** A batch bigger than one page of the Jobs table (50). */
const BIG_BATCH = "backfill";
const BIG_BATCH_SIZE = 51;

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

/**
 * The console's document: the editor webview whose page has the console's tabs. Found by its outer frame's name or the
 * webview id in its address, not by its place among the webviews, which changes as views open and close.
 */
async function consoleFrame(page) {
  const webviews = page.locator('iframe.webview[src*="extensionId=farmhand.farmhand"]');
  const deadline = Date.now() + UI_TIMEOUT;
  while (Date.now() < deadline) {
    for (let i = 0; i < (await webviews.count()); i++) {
      const name = await webviews.nth(i).getAttribute("name");
      const id = new URL((await webviews.nth(i).getAttribute("src")) ?? "", "http://x").searchParams.get("id");
      const selector = name ? `iframe.webview[name="${name}"]` : id ? `iframe.webview[src*="id=${id}&"]` : undefined;
      if (!selector) continue;
      const inner = page.frameLocator(selector).frameLocator("#active-frame");
      if ((await inner.locator("vscode-tabs#tabs").count()) > 0) return inner;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error("the console's webview never appeared");
}

/** Joins with `token` through the palette's Join a Farm…, and waits until the log says it joined. */
async function joinWith(session, token) {
  const before = joinsLogged(session.profile);
  await runCommand(session.page, "Farmhand: Join a Farm…");
  await answerQuickInput(session.page, /Join a Farm \(1\/2\)/, session.farm.url);
  await answerQuickInput(session.page, /Join a Farm \(2\/2\)/, token);
  const deadline = Date.now() + UI_TIMEOUT;
  while (joinsLogged(session.profile) === before) {
    if (Date.now() > deadline) assert.fail(`the join did not finish within ${UI_TIMEOUT} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function joinsLogged(profile) {
  return (farmhandLog(profile.userDataDir).match(/Joined the farm at/g) ?? []).length;
}

/** The README's picture per console page (docs/screenshots/console-<page>.png), from the screenshots this run took. */
const README_PAGES = ["overview", "jobs", "job", "workers", "access"];

describe("the operator's console", function () {
  this.timeout(180_000);
  let session;
  let page;
  let frame;
  let deadJobId;

  /** Picks `option` in the Jobs page's status filter (a vscode-single-select: its list is in its shadow root). */
  async function pickStatus(option) {
    await frame.locator("#status-filter").click();
    await frame.locator("#status-filter").getByRole("option", { name: option, exact: true }).click();
  }

  const tab = (name) => frame.locator(`#tabs vscode-tab-header[data-page="${name}"]`);
  const shoot = (name) => page.screenshot({ path: join(screenshots, `console-${name}.png`) });

  before(async () => {
    mkdirSync(screenshots, { recursive: true });
    const vsix = packageExtension(extensionDir);
    // runApps answered in the user settings: the join asks nothing about apps
    session = await startUiSession({
      vsix,
      name: "console-ui",
      settings: {
        "farmhand.allowRemoteDonation": true,
        "farmhand.runApps": false,
        // the README's pictures in the dark theme most editors use
        "workbench.colorTheme": "Default Dark Modern",
      },
    });
    page = session.page;
    deadJobId = await deadLetter(session.farm);
  });

  /** What a test left on the farm that must not outlive it, even when it fails half way. */
  const cleanUps = [];
  afterEach(async function () {
    await screenshotFailure(this.currentTest, page, screenshots, "console-");
    for (const cleanUp of cleanUps.splice(0)) await cleanUp();
  });

  after(async () => {
    if (session) {
      writeFileSync(join(screenshots, "console-browser.log"), session.browserLog.join("\n") + "\n");
      await session.stop();
    }
    if (process.env.FARMHAND_UPDATE_SCREENSHOT === "1") {
      for (const name of README_PAGES) {
        const from = join(screenshots, `console-${name}.png`);
        if (existsSync(from)) copyFileSync(from, join(repoDir, "docs", "screenshots", `console-${name}.png`));
      }
    }
  });

  it("a donor whose key may not manage the farm is told plainly that the console is for operators", async () => {
    await activityBarItem(page).click();
    await farmWelcome(page).getByRole("button", { name: "Join a Farm…" }).click();
    await answerQuickInput(page, /Join a Farm \(1\/2\)/, session.farm.url);
    await answerQuickInput(page, /Join a Farm \(2\/2\)/, session.farm.tokens.join);
    await treeRow(page, "This machine").waitFor({ timeout: UI_TIMEOUT });
    await runCommand(page, "Farmhand: Open Console");
    const toast = page.locator(".notification-toast").filter({ hasText: "the console is for operators" }).first();
    await toast.waitFor({ timeout: UI_TIMEOUT });
    await assertText(toast, /This machine's key was not enrolled with permission to manage the farm \(canManage\)/);
    await page.screenshot({ path: join(screenshots, "console-0-not-an-operator.png") });
    assert.equal(await page.locator('.tab[aria-label^="Farmhand Console"]').count(), 0, "a console tab opened for a donor who may not manage the farm");
  });

  it("joined with an operator's token, Farmhand: Open Console opens on the Overview: counts, figures and the chart", async () => {
    await clearNotifications(page);
    await joinWith(session, session.farm.tokens.operator);
    await runCommand(page, "Farmhand: Open Console");
    frame = await consoleFrame(page);
    assert.equal(await page.locator('.tab[aria-label^="Farmhand Console"]').count(), 1, "no editor tab named Farmhand Console");
    // the console gets the editor area's whole width for the screenshots
    await runCommand(page, "View: Close Primary Side Bar");
    await assertText(frame.locator("#counts"), /Pending\s*Running\s*Succeeded\s*Dead\s*Canceled\s*0\s*0\s*0\s*1\s*0/);
    await assertText(frame.locator("#farm-figures"), /Workers online/);
    await frame.locator(".chart canvas").waitFor({ timeout: UI_TIMEOUT });
    await assertText(frame.locator(".chart .u-legend"), /Finished[\s\S]*Failed/);
    // the cursor on the last few minutes, one at a time: the legend reads the minute's bars, and one of them holds
    // the dead letter's failed attempt (the minute may have turned since)
    const plot = frame.locator(".chart .u-over");
    const width = (await plot.boundingBox())?.width ?? 0;
    const legends = [];
    for (let minutesAgo = 0; minutesAgo < 4; minutesAgo++) {
      await plot.hover({ position: { x: width - (minutesAgo + 0.5) * (width / 61), y: 10 } });
      legends.push((await frame.locator(".chart .u-legend").textContent()) ?? "");
    }
    assert.ok(legends.some((legend) => /Failed\s*1$/.test(legend)), `no minute shows the failed attempt: ${JSON.stringify(legends)}`);
    await page.mouse.move(0, 0);
    await clearNotifications(page);
    await shoot("overview");
  });

  it("Jobs: the dead filter finds the dead letter; its page tells its story; Retry puts it back in the queue", async () => {
    await tab("jobs").click();
    await pickStatus("dead");
    await assertText(frame.locator("#jobs"), new RegExp(`${deadJobId.slice(-8)}\\s*demo\\.echo\\s*dead`));
    await frame.locator("#jobs button.link").first().click();
    await assertText(frame.locator("#timeline"), /submitted[\s\S]*claimed\s*test-worker-1[\s\S]*failed[\s\S]*dead/);
    await assertText(frame.locator("#job"), /the printer is on fire/);
    await shoot("job");
    await frame.locator("#retry-job").click();
    await assertText(frame.locator("#notice"), /Retried/);
    await assertText(frame.locator("#job h2"), /demo\.echo · pending/);
    // back in the queue, the error is its last attempt's, not news of this one
    await assertText(frame.locator("#job"), /Last attempt's error\s*the printer is on fire/);
    await assertText(frame.locator("#jobs"), /^Job\s*Type\s*Status\s*Attempt\s*Submitted\s*Last error$/);
  });

  it("Jobs: filters by type and by batch id; a combination no index serves says what it checked on the page", async () => {
    const http = new ConvexHttpClient(session.farm.url);
    const batchJobId = await http.mutation(anyApi.jobs.submit, {
      clientKey: session.farm.clientKey,
      type: "demo.echo",
      payload: {},
      batchId: BATCH,
      externalId: EXTERNAL_ID,
    });
    await frame.locator("#close-job").click();
    await frame.locator("#job").waitFor({ state: "detached", timeout: UI_TIMEOUT });
    await frame.locator("#filter-clear").click();
    // by type: none of a type nobody submitted, and the demo.echo jobs
    await frame.locator("#filter-type input").fill("demo.nothing");
    await frame.locator("#filter-apply").click();
    await assertText(frame.locator("#no-jobs"), /No jobs with type demo\.nothing\./);
    await frame.locator("#filter-type input").fill("demo.echo");
    await frame.locator("#filter-type input").press("Enter");
    await assertText(frame.locator("#jobs"), new RegExp(`${batchJobId.slice(-8)}\\s*demo\\.echo\\s*pending[\\s\\S]*${deadJobId.slice(-8)}\\s*demo\\.echo`));
    assert.equal(await frame.locator("#filter-note").count(), 0, "type alone is served by an index, yet the page has a note");
    await clearNotifications(page);
    await shoot("jobs");
    // by batch id: only the batch's job
    await frame.locator("#filter-type input").fill("");
    await frame.locator("#filter-batchId input").fill(BATCH);
    await frame.locator("#filter-apply").click();
    // (the type filter's table also starts with the batch's job, the newest: wait until the dead letter is gone)
    await assertText(frame.locator("#jobs"), (text) => /pending\s*0\/3/.test(text) && text.includes(batchJobId.slice(-8)) && !text.includes(deadJobId.slice(-8)));
    await assertCount(frame.locator("#jobs vscode-table-row"), 1);
    // by external id: the same job, found by the id its submitter gave it
    await frame.locator("#filter-clear").click();
    await frame.locator("#filter-externalId input").fill(EXTERNAL_ID);
    await frame.locator("#filter-apply").click();
    await assertText(frame.locator("#jobs"), (text) => text.includes(batchJobId.slice(-8)) && !text.includes(deadJobId.slice(-8)));
    await assertCount(frame.locator("#jobs vscode-table-row"), 1);
    await frame.locator("#filter-externalId input").fill("");
    await frame.locator("#filter-batchId input").fill(BATCH);
    await frame.locator("#filter-apply").click();
    // batch id and status: the batch index serves it, the status is checked on the page, and the page says so
    await pickStatus("dead");
    await assertText(frame.locator("#filter-note"), /No index serves this combination of filters: status was checked on 1 job\(s\) of the index only/);
    await assertText(frame.locator("#no-jobs"), /No jobs match on this page\./);
    await shoot("jobs-checked");
    // a time range: nothing was submitted in 2000; everything since
    await frame.locator("#filter-clear").click();
    await frame.locator("#filter-from input").fill("2000-01-01T00:00");
    await frame.locator("#filter-to input").fill("2000-01-02T00:00");
    await frame.locator("#filter-apply").click();
    await assertText(frame.locator("#no-jobs"), /No jobs with submitted from .*2000.*, submitted before .*2000.*\./);
    await frame.locator("#filter-to input").fill("");
    await frame.locator("#filter-apply").click();
    await assertText(frame.locator("#jobs"), new RegExp(`${batchJobId.slice(-8)}\\s*demo\\.echo\\s*pending`));
  });

  it("Jobs: Older shows the next 50 of the same filter, Newest goes back to the first page", async () => {
    const http = new ConvexHttpClient(session.farm.url);
    const jobs = Array.from({ length: BIG_BATCH_SIZE }, (_, i) => ({ type: "demo.echo", payload: { i }, batchId: BIG_BATCH }));
    const ids = await http.mutation(anyApi.jobs.submitBatch, { clientKey: session.farm.clientKey, jobs });
    assert.equal(ids.length, BIG_BATCH_SIZE);
    // should an assertion below fail, the batch must not stay in the queue for the tests after this one
    cleanUps.push(() => Promise.all(ids.map((jobId) => http.mutation(anyApi.jobs.cancel, { clientKey: session.farm.clientKey, jobId }).catch(() => undefined))));
    await frame.locator("#filter-clear").click();
    await frame.locator("#filter-batchId input").fill(BIG_BATCH);
    await frame.locator("#filter-apply").click();
    // newest first: the first page holds the 50 newest, the second the one submitted first
    await assertText(frame.locator("#jobs"), (text) => text.includes(ids[BIG_BATCH_SIZE - 1].slice(-8)));
    await assertCount(frame.locator("#jobs vscode-table-row"), 50);
    await frame.locator("#jobs-older").click();
    await assertText(frame.locator("#jobs"), (text) => text.includes(ids[0].slice(-8)) && !text.includes(ids[1].slice(-8)));
    await assertCount(frame.locator("#jobs vscode-table-row"), 1);
    await assertText(frame.locator(".pager"), /Page 2, 50 a page\./);
    assert.equal(await frame.locator("#jobs-older").count(), 0, "Older offered on the last page");
    await frame.locator("#jobs-newest").click();
    await assertText(frame.locator("#jobs"), (text) => text.includes(ids[BIG_BATCH_SIZE - 1].slice(-8)));
    await assertCount(frame.locator("#jobs vscode-table-row"), 50);
    // the batch's jobs are canceled: no later test (or worker) meets them
    await frame.locator("#bulk-cancel").click();
    await page.locator(".monaco-dialog-box").getByRole("button", { name: "Go Ahead" }).click();
    await assertText(frame.locator("#bulk-status"), new RegExp(`cancel: ${BIG_BATCH_SIZE} job\\(s\\) changed of ${BIG_BATCH_SIZE} looked at — done`));
  });

  it("Jobs: Retry All Dead… names the filter in use, then retries the dead letters it selects in scheduled batches", async () => {
    await deadLetter(session.farm);
    await deadLetter(session.farm);
    await frame.locator("#filter-clear").click();
    await pickStatus("dead");
    // every row dead: the table of the filter before (every job) is gone
    await assertText(frame.locator("#jobs"), (text) => /dead[\s\S]*dead/.test(text) && !/pending|running|succeeded|canceled/.test(text));
    const dead = await frame.locator("#jobs vscode-table-row").count();
    await frame.locator("#bulk-retry").click();
    const dialog = page.locator(".monaco-dialog-box");
    await assertText(dialog, /Retry every dead job with status dead\?/);
    await dialog.getByRole("button", { name: "Go Ahead" }).click();
    await assertText(frame.locator("#bulk-status"), new RegExp(`retry: ${dead} job\\(s\\) changed of ${dead} looked at — done`));
    await assertText(frame.locator("#jobs"), /^Job\s*Type\s*Status\s*Attempt\s*Submitted\s*Last error$/);
  });

  it("Workers: every worker with its state; Revoke… asks first, then revokes and the worker leaves the list", async () => {
    await tab("workers").click();
    await assertText(frame.locator("#workers"), /test-worker-1\s*(online|offline)/);
    await assertText(frame.locator("#workers"), /\(this machine\)/);
    await assertText(frame.locator("#leaderboard-week"), /Worker\s*CPU given\s*Jobs/);
    await clearNotifications(page);
    await shoot("workers");
    // workers are listed most recently seen first: revoke test-worker-1 by its row
    await frame.locator("#workers vscode-table-row", { hasText: "test-worker-1" }).locator("vscode-button", { hasText: "Revoke…" }).click();
    await page.locator(".monaco-dialog-box").getByRole("button", { name: "Revoke" }).click();
    // a revoked worker leaves the list (workers are listed most recently seen first, revoked ones not at all)
    await assertText(frame.locator("#workers"), (text) => !/test-worker-1/.test(text) && /\(this machine\)/.test(text));
  });

  it("Access: creates an enrollment token, shown once with a copy button; lists tokens and keys", async () => {
    await tab("access").click();
    await frame.locator("#token-capabilities input").fill("demo.echo, ollama:*");
    await frame.locator("#token-slots input").fill("3");
    await frame.getByRole("button", { name: "Create Enrollment Token" }).click();
    const token = frame.locator("#token-value input");
    await token.waitFor({ timeout: UI_TIMEOUT });
    assert.match(await token.inputValue(), /^fh_e_[A-Za-z0-9_-]{43}$/);
    await frame.locator("#token-copy").waitFor({ timeout: UI_TIMEOUT });
    await assertText(frame.locator("#enrollments vscode-table-row").first(), /open\s*demo\.echo, ollama:\*\s*3/);
    await assertText(frame.locator("#client-keys"), /test client/);
    await clearNotifications(page);
    await shoot("access");
  });

  it("Access: revokes an enrollment token and a client key, each after a confirmation (declined, nothing changes)", async () => {
    const newest = frame.locator("#enrollments vscode-table-row").first();
    const dialog = page.locator(".monaco-dialog-box");
    await newest.locator("vscode-button", { hasText: "Revoke…" }).click();
    await assertText(dialog, /Revoke this enrollment token\?/);
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await assertText(newest, /open\s*demo\.echo/);
    await newest.locator("vscode-button", { hasText: "Revoke…" }).click();
    await dialog.getByRole("button", { name: "Revoke" }).click();
    await assertText(newest, /revoked\s*demo\.echo, ollama:\*\s*3/);
    await assertText(frame.locator("#notice"), /Enrollment token revoked\./);
    // The farm's client key (the last thing this suite does with it).
    const key = frame.locator("#client-keys vscode-table-row").filter({ hasText: "test client" }).first();
    await key.locator("vscode-button", { hasText: "Revoke…" }).click();
    await assertText(dialog, /Revoke this client key\?/);
    await dialog.getByRole("button", { name: "Revoke" }).click();
    await assertText(key, /test client\s*\S+…\s*revoked/);
    await assertText(frame.locator("#notice"), /Client key revoked\./);
  });

  it("the console's webview broke no Content Security Policy rule on the way", () => {
    const violations = session.browserLog.filter((line) => /Content Security Policy|Refused to (apply|execute|load|evaluate)/i.test(line));
    assert.deepEqual(violations, []);
  });
});
