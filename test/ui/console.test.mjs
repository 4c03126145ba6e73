// UI test of the operator's console (Farmhand: Open Console) in the packaged extension, in code-server. A donor whose
// key may not manage the farm is asked for an operator key (a worker key is refused by the field); an operator's
// machine (an old canManage grant) opens each page: the Overview shows the test farm;
// the Jobs page filters by status, type and batch id (and says when a combination was checked on one page only), a
// dead letter's page tells its story and Retry sends it back; a bulk retry acts on the filter; a worker is revoked
// after the confirmation (its buttons say what they do and name the worker); an enrollment token and a client key are
// made, each shown once, and the farm refuses the machine's worker key an operator key (the page says why); a live
// update leaves an open Status list open and
// the table's rows in place; an image result shows as an image with Save Image…; at 1024 px no Revoke… is cut off;
// after Leave Farm and Join the console follows the new key, an operator key replaces the worker key, and when the
// farm goes away the console says it is offline. No CSP violation on the way. Screenshots go to test/artifacts/ui-console/ (FARMHAND_UPDATE_SCREENSHOT=1 copies each page's
// to docs/screenshots/console-<page>.png). Run through test/ui/run-ui-tests.mjs.
import * as assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import { after, afterEach, before, describe, it } from "mocha";
import { artifactsDir, extensionDir, repoDir } from "../harness/paths.mjs";
import { consoleFrame } from "./consoleFrame.mjs";
import { farmhandLog } from "./farm.mjs";
import { packageExtension } from "./packaging.mjs";
import { answerQuickInput, assertCount, assertText, clearNotifications, runCommand, screenshotFailure, startUiSession, UI_TIMEOUT } from "./session.mjs";
import { activityBarItem, farmWelcome, quickInputBox, quickInputTitle, treeRow } from "./workbench.mjs";

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

/** A width × height PNG of a colour gradient, as base64 (what the Mandelbrot app's result carries). */
function gradientPng(width, height) {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (bytes) => {
    let c = 0xffffffff;
    for (const b of bytes) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type, data) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([length, body, sum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const rows = [];
  for (let y = 0; y < height; y++) {
    rows.push(0);
    for (let x = 0; x < width; x++) rows.push((x * 255) / width, (y * 255) / height, 160);
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", header), chunk("IDAT", deflateSync(Buffer.from(rows))), chunk("IEND", Buffer.alloc(0))]).toString("base64");
}

/** The console guide's picture per page (docs/operating.md shows docs/screenshots/console-<page>.png), from the screenshots this run took. */
const README_PAGES = ["overview", "jobs", "job", "workers", "access"];

/** The packaged extension, made once for both suites of this file. */
let vsix;

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
    vsix = packageExtension(extensionDir);
    // runApps answered in the user settings: the join asks nothing about apps
    session = await startUiSession({
      vsix,
      name: "console-ui",
      settings: {
        "farmhand.allowRemoteDonation": true,
        "farmhand.runApps": false,
        // the console guide's pictures in the dark theme most editors use
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

  it("a donor whose key may not manage the farm is asked for an operator key; a worker key does not pass for one", async () => {
    await activityBarItem(page).click();
    await farmWelcome(page).getByRole("button", { name: "Join a Farm…" }).click();
    await answerQuickInput(page, /Join a Farm \(1\/2\)/, session.farm.url);
    await answerQuickInput(page, /Join a Farm \(2\/2\)/, session.farm.tokens.join);
    await treeRow(page, "This machine").waitFor({ timeout: UI_TIMEOUT });
    await runCommand(page, "Farmhand: Open Console");
    await quickInputTitle(page).filter({ hasText: "Farmhand Console: Operator Key" }).waitFor({ timeout: UI_TIMEOUT });
    await assertText(page.locator(".quick-input-widget"), /this machine's worker key may not manage the farm\. Enter an operator key \(fh_o_…\)/);
    await quickInputBox(page).fill(session.farm.workerKey);
    await assertText(page.locator(".quick-input-widget .quick-input-message"), /An operator key starts with fh_o_/);
    await page.screenshot({ path: join(screenshots, "console-0-not-an-operator.png") });
    await quickInputBox(page).press("Escape");
    assert.equal(await page.locator('.tab[aria-label^="Farmhand Console"]').count(), 0, "a console tab opened for a donor who may not manage the farm");
  });

  it("joined with a managing worker's token (a grant from before operator keys), Farmhand: Open Console opens on the Overview", async () => {
    await clearNotifications(page);
    await joinWith(session, session.farm.tokens.operator);
    await runCommand(page, "Farmhand: Open Console");
    frame = await consoleFrame(page);
    assert.equal(await page.locator('.tab[aria-label^="Farmhand Console"]').count(), 1, "no editor tab named Farmhand Console");
    await assertText(frame.locator("#credential"), /Signed in with this machine's worker key fh_w_/);
    // the console gets the editor area's whole width for the screenshots
    await runCommand(page, "View: Close Primary Side Bar");
    await assertText(frame.locator("#counts"), /Pending\s*Running\s*Succeeded\s*Dead\s*Canceled\s*0\s*0\s*0\s*1\s*0/);
    await assertText(frame.locator("#farm-figures"), /Workers online/);
    // no job answered from the result cache yet on the test farm
    await assertText(frame.locator("#cache-hits"), /^none yet$/);
    // energy given, a section of its own
    await assertText(frame.locator("#energy-heading"), /^Energy given: \d+\.\d+ kWh this week$/);
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
    await assertText(frame.locator("#jobs"), /^Job\s*Type\s*Status\s*Client key\s*Attempt\s*Submitted\s*Why it waits\s*Last error$/);
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
    await assertText(frame.locator("#jobs"), (text) => /pending[\s\S]{0,60}?0\/3/.test(text) && text.includes(batchJobId.slice(-8)) && !text.includes(deadJobId.slice(-8)));
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
    // a partial search is the only page that says how many it looked at
    assert.equal(await frame.locator("#pager-label").count(), 0, "the index served this filter, yet the page says it looked at the newest 50");
    await frame.locator("#bulk-cancel").click();
    const dialog = page.locator(".monaco-dialog-box");
    await assertText(dialog, new RegExp(`Cancel ${BIG_BATCH_SIZE} jobs with batch ${BIG_BATCH}\\?`));
    await page.screenshot({ path: join(screenshots, "console-confirm-cancel.png") });
    assert.equal(await dialog.getByRole("button", { name: "Go Ahead" }).count(), 0);
    await dialog.getByRole("button", { name: "Keep Them" }).waitFor({ timeout: UI_TIMEOUT });
    await dialog.getByRole("button", { name: `Cancel ${BIG_BATCH_SIZE} jobs` }).click();
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
    await assertText(dialog, new RegExp(`Retry ${dead} dead jobs with status dead\\?`));
    await dialog.getByRole("button", { name: `Retry ${dead} dead jobs` }).click();
    await assertText(frame.locator("#bulk-status"), new RegExp(`retry: ${dead} job\\(s\\) changed of ${dead} looked at — done`));
    await assertText(frame.locator("#jobs"), /^Job\s*Type\s*Status\s*Client key\s*Attempt\s*Submitted\s*Why it waits\s*Last error$/);
  });

  it("Jobs: a live update patches the rows in place and leaves an open Status list open", async () => {
    await tab("jobs").click();
    await frame.locator("#filter-clear").click();
    await assertText(frame.locator("#jobs"), (text) => /dead|pending|canceled/.test(text));
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // the page settles
    await frame.locator("#jobs vscode-table-row").first().evaluate((row) => (row.dataset.marker = "kept"));
    const status = frame.locator("#status-filter");
    await status.evaluate((select) => (select.dataset.marker = "kept"));
    await status.click();
    assert.equal(await status.evaluate((select) => select.open), true, "the Status list did not open");
    // a job lands while the list is open: the table gains a row, the list stays open and on top
    const http = new ConvexHttpClient(session.farm.url);
    const jobId = await http.mutation(anyApi.jobs.submit, { clientKey: session.farm.clientKey, type: "demo.echo", payload: { live: true }, maxAttempts: 1 });
    cleanUps.push(() => http.mutation(anyApi.jobs.cancel, { clientKey: session.farm.clientKey, jobId }).catch(() => undefined));
    await assertText(frame.locator("#jobs"), (text) => text.includes(jobId.slice(-8)));
    await page.screenshot({ path: join(screenshots, "console-live-update-open-list.png") });
    assert.deepEqual(await status.evaluate((select) => [select.open, select.dataset.marker, select.isConnected]), [true, "kept", true], "the Status list was re-created or closed");
    assert.equal(await frame.locator('#jobs vscode-table-row[data-marker="kept"]').count(), 1, "the table's rows were re-created, not patched");
    await status.getByRole("option", { name: "Any status", exact: true }).click();
  });

  it("Jobs: a result that is a PNG shows as an image, with Save Image…", async () => {
    const http = new ConvexHttpClient(session.farm.url);
    const png = gradientPng(48, 32);
    const jobId = await http.mutation(anyApi.jobs.submit, { clientKey: session.farm.clientKey, type: "demo.echo", payload: {}, batchId: "picture", maxAttempts: 1 });
    for (let tries = 0; tries < 50; tries++) {
      const claims = await http.mutation(anyApi.workers.claim, { apiKey: session.farm.workerKey, capabilities: ["demo.echo"], max: 4 });
      for (const claim of claims) {
        await http.mutation(anyApi.workers.complete, { apiKey: session.farm.workerKey, leaseId: claim.leaseId, result: { width: 48, height: 32, png } });
      }
      if ((await http.query(anyApi.jobs.get, { clientKey: session.farm.clientKey, jobId })).status === "succeeded") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await frame.locator("#filter-batchId input").fill("picture");
    await frame.locator("#filter-apply").click();
    await assertText(frame.locator("#jobs"), (text) => text.includes(jobId.slice(-8)) && text.includes("succeeded"));
    await frame.locator("#jobs button.link").first().click();
    const image = frame.locator("#result-image-png");
    await image.waitFor({ timeout: UI_TIMEOUT });
    assert.deepEqual(await image.evaluate(async (img) => (await img.decode(), [img.naturalWidth, img.naturalHeight])), [48, 32]);
    await frame.locator("#save-image-png").waitFor({ timeout: UI_TIMEOUT });
    await assertText(frame.locator("#result-text"), /"png": "<PNG, \d+ bytes>"/);
    await clearNotifications(page);
    await page.screenshot({ path: join(screenshots, "console-result-image.png") });
    await frame.locator("#close-job").click();
    await frame.locator("#filter-clear").click();
  });

  it("Workers: every worker with its state; Revoke… asks first, then revokes and the worker leaves the list", async () => {
    await tab("workers").click();
    await assertText(frame.locator("#workers"), /test-worker-1\s*(online|offline)/);
    await assertText(frame.locator("#workers"), /\(this machine\)/);
    await assertText(frame.locator("#leaderboard-week"), /Worker\s*CPU given\s*Energy\s*Jobs/);
    // the energy each worker's jobs used, all time; adaptive trust: a streak per job type (none before a checked
    // result) and the daily job quota
    await assertText(frame.locator("#workers"), /CPU\s*Energy\s*Streak\s*Quota/);
    await assertText(frame.locator("#workers vscode-table-row").filter({ hasText: "test-worker-1" }), /—\s*full/);
    await assertText(frame.locator("#workers vscode-table-row").filter({ hasText: "test-worker-1" }), /online\s*(just now|\d+m ago)/);
    await clearNotifications(page);
    await shoot("workers");
    // workers are listed most recently seen first: revoke test-worker-1 by its row
    await frame.locator("#workers vscode-table-row").filter({ hasText: "test-worker-1" }).locator("vscode-button", { hasText: "Revoke…" }).click();
    const dialog = page.locator(".monaco-dialog-box");
    await assertText(dialog, /Revoke the worker “test-worker-1”\?/);
    await dialog.getByRole("button", { name: "Revoke test-worker-1" }).click();
    await assertText(frame.locator("#notice"), /Worker “test-worker-1” revoked/);
    // a revoked worker leaves the list (workers are listed most recently seen first, revoked ones not at all)
    await assertText(frame.locator("#workers"), (text) => !/test-worker-1/.test(text) && /\(this machine\)/.test(text));
  });

  it("Access: creates an enrollment token (with a donor label), shown once with a copy button; lists tokens and keys", async () => {
    await tab("access").click();
    await frame.locator("#token-capabilities input").fill("demo.echo, ollama:*");
    await frame.locator("#token-donor input").fill("alice");
    await frame.locator("#token-slots input").fill("3");
    await frame.getByRole("button", { name: "Create Enrollment Token" }).click();
    const token = frame.locator("#secret-enrollment-value input");
    await token.waitFor({ timeout: UI_TIMEOUT });
    assert.match(await token.inputValue(), /^fh_e_[A-Za-z0-9_-]{43}$/);
    await frame.locator("#secret-enrollment-copy").waitFor({ timeout: UI_TIMEOUT });
    await assertText(frame.locator("#enrollments vscode-table-row").first(), /open\s*alice\s*demo\.echo, ollama:\*\s*3/);
    await assertText(frame.locator("#client-keys"), /test client/);
    // a client key, shown once; it submits jobs
    await frame.locator("#client-key-name input").fill("nightly builds");
    await frame.getByRole("button", { name: "Create Client Key" }).click();
    const clientKey = frame.locator("#secret-client-value input");
    await clientKey.waitFor({ timeout: UI_TIMEOUT });
    assert.match(await clientKey.inputValue(), /^fh_c_[A-Za-z0-9_-]{43}$/);
    await assertText(frame.locator("#client-keys"), /nightly builds\s*fh_c_\S*…\s*active\s*no/);
    const http = new ConvexHttpClient(session.farm.url);
    assert.ok(await http.mutation(anyApi.jobs.submit, { clientKey: await clientKey.inputValue(), type: "demo.echo", payload: {}, maxAttempts: 1 }));
    // this console uses a managing worker's key: it says so, and the farm refuses it an operator key
    await assertText(frame.locator("#operator-only"), /no operator key and no client key that may publish apps/);
    await frame.locator("#operator-key-name input").fill("alice");
    await frame.getByRole("button", { name: "Create Operator Key" }).click();
    await assertText(frame.locator("#notice"), /A worker's key cannot make an operator key/);
    assert.equal(await frame.locator("#secret-operator-value").count(), 0, "a worker's key made an operator key");
    // the token made before is still on screen: each secret under the form that made it
    assert.match(await token.inputValue(), /^fh_e_/);
    await clearNotifications(page);
    await shoot("access");
  });

  it("Access: revokes an enrollment token and a client key, each after a confirmation (declined, nothing changes)", async () => {
    const newest = frame.locator("#enrollments vscode-table-row").first();
    const dialog = page.locator(".monaco-dialog-box");
    await newest.locator("vscode-button", { hasText: "Revoke…" }).click();
    await assertText(dialog, /Revoke the enrollment token fh_e_\S*…\?/);
    await dialog.getByRole("button", { name: "Keep It" }).click();
    await assertText(newest, /open\s*alice\s*demo\.echo/);
    await newest.locator("vscode-button", { hasText: "Revoke…" }).click();
    await dialog.getByRole("button", { name: "Revoke Token" }).click();
    await assertText(newest, /revoked\s*alice\s*demo\.echo, ollama:\*\s*3/);
    await assertText(frame.locator("#notice"), /Enrollment token revoked\./);
    // The farm's client key (the last thing this suite does with it).
    const key = frame.locator("#client-keys vscode-table-row").filter({ hasText: "test client" }).first();
    await key.locator("vscode-button", { hasText: "Revoke…" }).click();
    await assertText(dialog, /Revoke the client key “test client”\?/);
    await dialog.getByRole("button", { name: "Revoke test client" }).click();
    await assertText(key, /test client\s*\S+…\s*revoked/);
    await assertText(frame.locator("#notice"), /Client key revoked\./);
  });

  it("at 1024 px wide no table cuts off its Revoke… buttons", async () => {
    // a worker the Workers page offers to revoke, with a long name
    const http = new ConvexHttpClient(session.farm.url);
    const { token } = await http.mutation(anyApi.consoleAccess.createEnrollment, { apiKey: session.farm.operatorKey, capabilities: ["demo.echo"] });
    await http.mutation(anyApi.workers.enroll, { token, name: "build-server-with-a-long-name-07", machineId: "ui-1024", capabilities: ["demo.echo"] });
    const before = page.viewportSize();
    await page.setViewportSize({ width: 1024, height: 768 });
    try {
      for (const name of ["workers", "access"]) {
        await tab(name).click();
        const buttons = frame.locator("vscode-button.revoke");
        await buttons.first().waitFor({ timeout: UI_TIMEOUT });
        await new Promise((resolve) => setTimeout(resolve, 500)); // the tables size their columns
        await page.screenshot({ path: join(screenshots, `console-1024-${name}.png`) });
        for (let i = 0; i < (await buttons.count()); i++) {
          const fit = await buttons.nth(i).evaluate((button) => {
            const cell = button.closest("vscode-table-cell").getBoundingClientRect();
            const box = button.getBoundingClientRect();
            return { inCell: box.left >= cell.left - 0.5 && box.right <= cell.right + 0.5, box: [box.left, box.right], cell: [cell.left, cell.right] };
          });
          assert.ok(fit.inCell, `${name}: Revoke… #${i} is cut off by its cell: ${JSON.stringify(fit)}`);
        }
      }
    } finally {
      if (before) await page.setViewportSize(before);
    }
  });

  it("after Leave Farm and Join the open console follows the current key; an operator key takes over from the worker key", async () => {
    await tab("workers").click();
    await assertText(frame.locator("#workers"), /\(this machine\)/);
    await runCommand(page, "Farmhand: Leave Farm");
    await page.locator(".monaco-dialog-box").getByRole("button", { name: "Leave Farm" }).click();
    await assertText(frame.locator("#error"), /No key to show the farm with: this machine left its farm/);
    assert.equal(await frame.locator("#workers").count(), 0, "the left farm's workers are still shown");
    // joined again as a plain donor: the console says what this key may do, not that the old one was revoked
    await joinWith(session, session.farm.tokens.wide);
    await assertText(frame.locator("#error"), /not enrolled with permission to manage the farm/);
    await assertText(frame.locator("#credential"), /worker key fh_w_/);
    // the operator key: the console uses it from now on, whatever the machine's membership
    await runCommand(page, "Farmhand: Enter Operator Key…");
    await answerQuickInput(page, /Farmhand Console: Operator Key/, session.farm.operatorKey);
    await assertText(frame.locator("#credential"), /Signed in with operator key fh_o_/);
    // the farm's workers as the operator key sees them: the machines online, the revoked test-worker-1 no longer listed
    await assertText(frame.locator("#workers"), (text) => /code-server on vm\s*online/.test(text) && !/test-worker-1/.test(text));
    assert.equal(await frame.locator("#error").isVisible(), false, "an error is still shown");
    await runCommand(page, "Farmhand: Leave Farm");
    await page.locator(".monaco-dialog-box").getByRole("button", { name: "Leave Farm" }).click();
    await joinWith(session, session.farm.tokens.leave);
    // the farm's workers as the operator key sees them: the machines online, the revoked test-worker-1 no longer listed
    await assertText(frame.locator("#workers"), (text) => /code-server on vm\s*online/.test(text) && !/test-worker-1/.test(text));
    assert.equal(await frame.locator("#error").isVisible(), false, "an error is shown after leaving and joining with the operator key in use");
    await clearNotifications(page);
    await page.screenshot({ path: join(screenshots, "console-operator-key.png") });
  });

  it("when the farm goes away the console says it is offline", async () => {
    await session.farm.stop();
    await assertText(frame.locator("#offline"), /The farm is offline since .+: what you see is as of then/);
    await page.screenshot({ path: join(screenshots, "console-offline.png") });
  });

  it("the console's webview broke no Content Security Policy rule on the way", () => {
    const violations = session.browserLog.filter((line) => /Content Security Policy|Refused to (apply|execute|load|evaluate)/i.test(line));
    assert.deepEqual(violations, []);
  });
});

describe("the console provisioned as npm start provisions it", function () {
  this.timeout(180_000);
  let session;

  before(async () => {
    vsix ??= packageExtension(extensionDir);
    // a donor's token to join with, and the farm's operator key for the console: the demo's editor
    session = await startUiSession({
      vsix,
      name: "console-provisioned",
      settings: { "farmhand.allowRemoteDonation": true, "farmhand.runApps": false },
      env: (farm) => ({ FARMHAND_JOIN_URL: farm.url, FARMHAND_JOIN_TOKEN: farm.tokens.join, FARMHAND_OPERATOR_KEY: farm.operatorKey }),
    });
  });

  afterEach(async function () {
    await screenshotFailure(this.currentTest, session?.page, screenshots, "console-provisioned-");
  });

  after(async () => {
    await session?.stop();
  });

  it("opens in one step with the provisioned operator key, although the machine joined as a plain donor", async () => {
    const { page } = session;
    await activityBarItem(page).click();
    await treeRow(page, "This machine").waitFor({ timeout: UI_TIMEOUT });
    await runCommand(page, "Farmhand: Open Console");
    const frame = await consoleFrame(page);
    await assertText(frame.locator("#credential"), /Signed in with operator key fh_o_/);
    await assertText(frame.locator("#counts"), /Pending\s*Running/);
    assert.equal(await page.locator(".quick-input-widget .quick-input-title").filter({ hasText: "Operator Key" }).count(), 0, "it asked for an operator key");
    await page.screenshot({ path: join(screenshots, "console-provisioned.png") });
  });
});
