// UI test of why a job waits, in the packaged extension in code-server (the console opened with the operator key npm
// start provisions): for every cause — a type no online worker handles, more memory than any machine has, a parent not
// yet succeeded, a start in an hour, its client key at its most running, an identical cached job in flight, then, with
// the seeded worker the only machine online, a quorum of 2 with one machine that ran its instance, a retry backoff,
// every slot busy and every worker paused — the job's page says why in the server's exact words (jobs:get) with the
// code beside it, and its row in the Jobs list's "Why it waits" column says the same; the Overview's Stuck section
// lists the lanes nothing online can run. At 1024 px wide: one screenshot per cause,
// test/artifacts/ui-console/console-why-<code>.png. Run alone: npx mocha --timeout 60000 test/ui/consoleWhy.test.mjs
import * as assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import { after, afterEach, before, describe, it } from "mocha";
import { artifactsDir, extensionDir } from "../harness/paths.mjs";
import { consoleFrame } from "./consoleFrame.mjs";
import { packageExtension } from "./packaging.mjs";
import { assertText, clearNotifications, runCommand, screenshotFailure, startUiSession, UI_TIMEOUT } from "./session.mjs";
import { activityBarItem, treeRow } from "./workbench.mjs";

const screenshots = join(artifactsDir, "ui-console");

describe("the console says why a job waits", function () {
  this.timeout(300_000);
  let session;
  let page;
  let frame;
  let http;
  /** Per cause: the job that shows it and the client key that submitted it. */
  const jobs = {};

  before(async () => {
    mkdirSync(screenshots, { recursive: true });
    const vsix = packageExtension(extensionDir);
    session = await startUiSession({
      vsix,
      name: "console-why",
      settings: { "farmhand.allowRemoteDonation": false, "farmhand.runApps": false, "workbench.colorTheme": "Default Dark Modern" },
      env: (farm) => ({ FARMHAND_JOIN_URL: farm.url, FARMHAND_JOIN_TOKEN: farm.tokens.join, FARMHAND_OPERATOR_KEY: farm.operatorKey }),
    });
    page = session.page;
    http = new ConvexHttpClient(session.farm.url);
  });

  afterEach(async function () {
    await screenshotFailure(this.currentTest, page, screenshots, "console-why-");
  });

  after(async () => {
    await session?.stop();
  });

  const tab = (name) => frame.locator(`#tabs vscode-tab-header[data-page="${name}"]`);
  /** The seeded worker's lease on the job that holds its client key at its limit. */
  let heldLease;
  /** The seeded worker's lease on the job that fills its one slot (all_busy). */
  let busyLease;
  // the farm's other client key (no limit on running jobs): its jobs wait for the farm, never for their key
  const submitOther = (spec) => http.mutation(anyApi.jobs.submit, { clientKey: session.farm.publishKey, payload: {}, ...spec });

  /**
   * Opens the job's page; its Why line must read the server's own code and sentence (jobs:get, read again while the
   * summary settles), its row in the Jobs list the same sentence; then the 1024 px screenshot console-why-<code>.png.
   */
  async function showsWhy(code) {
    const { jobId, key } = jobs[code];
    await tab("jobs").click();
    await frame.locator(`#jobs button.link[title="${jobId}"]`).click();
    const line = frame.locator("#wait-reason");
    const deadline = Date.now() + 30_000;
    let server;
    let shown = "";
    for (;;) {
      server = await http.query(anyApi.jobs.get, { clientKey: key, jobId });
      shown = (await line.textContent({ timeout: 1_000 }).catch(() => "")) ?? "";
      if (server.waitCode === code && shown === `Why it waits: ${server.waitReason} ${code}`) break;
      if (Date.now() > deadline) assert.fail(`job ${jobId}: the server says ${JSON.stringify([server.waitCode, server.waitReason])}, its page ${JSON.stringify(shown)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(await line.getAttribute("data-code"), code);
    // the list's column says the same words as the page, on the job's own row
    const row = frame.locator("#jobs vscode-table-row", { has: frame.locator(`button.link[title="${jobId}"]`) });
    await assertText(row.locator(".wait-cell"), (text) => text === server.waitReason, 30_000);
    assert.equal(await row.locator(".wait-cell").getAttribute("data-code"), code);
    await clearNotifications(page);
    const shot = await page.screenshot({ path: join(screenshots, `console-why-${code}.png`) });
    assert.equal(shot.readUInt32BE(16), 1024, "the screenshot is not 1024 px wide");
    await frame.locator("#close-job").click();
  }

  it("submits one job per cause", async () => {
    const { clientKey, workerKey } = session.farm;
    const submit = (spec) => http.mutation(anyApi.jobs.submit, { clientKey, payload: {}, ...spec });
    // its client key at its most running: the seeded worker holds one job, the next waits
    const access = await http.query(anyApi.consoleAccess.list, { apiKey: session.farm.operatorKey });
    const clientKeyId = access.clientKeys.find((k) => k.name === "test client").clientKeyId;
    await http.mutation(anyApi.consoleAccess.setClientKeyLimits, { apiKey: session.farm.operatorKey, clientKeyId, maxRunning: 1 });
    const held = await submit({ type: "demo.echo" });
    const [lease] = await http.mutation(anyApi.workers.claim, { apiKey: workerKey, capabilities: ["demo.echo"], max: 1 });
    assert.equal(lease?.jobId, held, "the seeded worker did not take the job");
    heldLease = lease.leaseId;
    const byTestClient = async (spec) => ({ jobId: await submit(spec), key: clientKey });
    jobs.key_at_limit = await byTestClient({ type: "demo.echo" });
    jobs.no_worker_for_type = await byTestClient({ type: "image.resize" });
    jobs.no_machine_meets = await byTestClient({ type: "demo.echo", requirements: { minMemoryMB: 4_000_000 } });
    jobs.waiting_for_parents = await byTestClient({ type: "demo.echo", dependsOn: { jobs: [jobs.no_worker_for_type.jobId] } });
    jobs.scheduled = await byTestClient({ type: "demo.echo", runAt: Date.now() + 60 * 60_000 });
    // a cached job while the identical one is still in flight (nothing runs demo.echo jobs of this key meanwhile)
    const first = await submitOther({ type: "demo.echo", payload: { n: 37 }, cache: true });
    jobs.waiting_for_identical = { jobId: await submitOther({ type: "demo.echo", payload: { n: 37 }, cache: true }), key: session.farm.publishKey };
    assert.notEqual(jobs.waiting_for_identical.jobId, first);
  });

  it("the Overview's Stuck section lists the lanes nothing online can run", async () => {
    await activityBarItem(page).click();
    await treeRow(page, "This machine").waitFor({ timeout: UI_TIMEOUT });
    await runCommand(page, "Farmhand: Open Console");
    frame = await consoleFrame(page);
    await runCommand(page, "View: Close Primary Side Bar");
    await page.setViewportSize({ width: 1024, height: 768 });
    await tab("overview").click();
    await assertText(frame.locator("#stuck"), /image\.resize\s*1\s*no online worker handles image\.resize: it waits until one does/, 30_000);
    await assertText(frame.locator("#stuck"), /demo\.echo · ≥ 4096 GB memory\s*1\s*its jobs need a machine with ≥ 4096 GB memory \(the lane's class\); the largest machine has [\d.]+ GB memory: no machine of the farm can run them/);
  });

  for (const code of ["no_worker_for_type", "no_machine_meets", "waiting_for_parents", "scheduled", "key_at_limit", "waiting_for_identical"]) {
    it(`a job's page and the Jobs list say why: ${code} (console-why-${code}.png)`, async () => {
      await showsWhy(code);
    });
  }

  // From here the seeded worker is the farm's only machine online, and the test says what it runs and declares.
  it("the seeded worker is left the only machine online (the others are revoked), its held job done", async () => {
    const { workerKey, operatorKey } = session.farm;
    const me = (await http.query(anyApi.farm.overview, { apiKey: workerKey })).workers.find((w) => w.isMe);
    assert.ok(me, "the farm's overview does not list the seeded worker");
    // every machine that joined with an enrollment token (this window's own among them), from the Access page's list
    const { enrollments } = await http.query(anyApi.consoleAccess.list, { apiKey: operatorKey });
    const others = enrollments.filter((e) => e.workerId && e.workerId !== me.workerId).map((e) => e.workerId);
    for (const workerId of others) await http.mutation(anyApi.consoleAccess.revokeWorker, { apiKey: operatorKey, workerId });
    // its lease may have run out meanwhile (then the janitor took the job back): either way it runs nothing now
    await http.mutation(anyApi.workers.complete, { apiKey: workerKey, leaseId: heldLease, result: {} }).catch((e) => assert.equal(e.data?.code, "stale_lease"));
  });

  it("a job's page and the Jobs list say why: needs_more_machines (console-why-needs_more_machines.png)", async () => {
    const { workerKey } = session.farm;
    // demo.primes: no other job of that type, so the claim takes an instance of this one
    const jobId = await submitOther({ type: "demo.primes", payload: { n: 10 }, validation: { quorum: 2 } });
    const [lease] = await http.mutation(anyApi.workers.claim, { apiKey: workerKey, capabilities: ["demo.primes"], max: 1 });
    assert.equal(lease?.jobId, jobId, "the seeded worker did not take an instance of the replicated job");
    await http.mutation(anyApi.workers.complete, { apiKey: workerKey, leaseId: lease.leaseId, result: { count: 4 } });
    jobs.needs_more_machines = { jobId, key: session.farm.publishKey };
    await showsWhy("needs_more_machines");
  });

  it("a job's page and the Jobs list say why: backoff (console-why-backoff.png)", async () => {
    const { workerKey } = session.farm;
    // the backoff doubles each attempt (2 s · 2^(attempt−1), 50–100 %): after 6 failures the job waits 32–64 s
    const jobId = await submitOther({ type: "demo.slow", payload: { ms: 1 }, maxAttempts: 10 });
    for (let failed = 0; failed < 6; failed++) {
      const deadline = Date.now() + 60_000;
      let lease;
      while (!lease) {
        [lease] = await http.mutation(anyApi.workers.claim, { apiKey: workerKey, capabilities: ["demo.slow"], max: 1 });
        if (!lease && Date.now() > deadline) assert.fail(`attempt ${failed + 1} of the job was never claimable`);
        if (!lease) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      assert.equal(lease.jobId, jobId);
      await http.mutation(anyApi.workers.fail, { apiKey: workerKey, leaseId: lease.leaseId, error: `planned failure ${failed + 1}` });
    }
    jobs.backoff = { jobId, key: session.farm.publishKey };
    await showsWhy("backoff");
  });

  it("a job's page and the Jobs list say why: all_busy (console-why-all_busy.png)", async () => {
    const { workerKey } = session.farm;
    // its one slot takes a demo.echo job (whichever comes first), and one more waits
    const [lease] = await http.mutation(anyApi.workers.claim, { apiKey: workerKey, capabilities: ["demo.echo"], max: 1 });
    assert.ok(lease, "the seeded worker found no demo.echo job to fill its slot");
    busyLease = lease.leaseId;
    jobs.all_busy = { jobId: await submitOther({ type: "demo.echo", payload: { n: 1 } }), key: session.farm.publishKey };
    await showsWhy("all_busy");
  });

  it("a job's page and the Jobs list say why: all_paused (console-why-all_paused.png)", async () => {
    const { workerKey } = session.farm;
    // (on a slow run its lease may have run out: the job is back in the queue and the slot free all the same)
    await http.mutation(anyApi.workers.complete, { apiKey: workerKey, leaseId: busyLease, result: {} }).catch((e) => assert.equal(e.data?.code, "stale_lease"));
    // its owner paused it: it declares no slots
    await http.mutation(anyApi.workers.ready, { apiKey: workerKey, capabilities: ["demo.echo"], slots: 0 });
    jobs.all_paused = { jobId: await submitOther({ type: "demo.echo", payload: { n: 2 } }), key: session.farm.publishKey };
    await showsWhy("all_paused");
  });

  it("the console's webview broke no Content Security Policy rule on the way", () => {
    const violations = session.browserLog.filter((line) => /Content Security Policy|Refused to (apply|execute|load|evaluate)/i.test(line));
    assert.deepEqual(violations, []);
  });
});
