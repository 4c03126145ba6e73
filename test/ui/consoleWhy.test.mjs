// UI test of why a job waits, in the packaged extension in code-server (the console opened with the operator key npm
// start provisions): for each cause the test can bring about on the test farm — a type no online worker handles,
// more memory than any machine has, a parent not yet succeeded, a start in an hour, its client key at its most running — the job's
// page says why in the farm's words with the code beside it, and the Jobs list's "Why it waits" column says the same;
// the Overview's Stuck section lists the lanes nothing online can run. At 1024 px wide: one screenshot per cause,
// test/artifacts/ui-console/console-why-<code>.png. Run alone: npx mocha test/ui/consoleWhy.test.mjs
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
    jobs.key_at_limit = await submit({ type: "demo.echo" });
    jobs.no_worker_for_type = await submit({ type: "image.resize" });
    jobs.no_machine_meets = await submit({ type: "demo.echo", requirements: { minMemoryMB: 4_000_000 } });
    jobs.waiting_for_parents = await submit({ type: "demo.echo", dependsOn: { jobs: [jobs.no_worker_for_type] } });
    jobs.scheduled = await submit({ type: "demo.echo", runAt: Date.now() + 60 * 60_000 });
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
    await assertText(frame.locator("#stuck"), /demo\.echo · ≥ 4096 GB memory\s*1\s*needs 4096 GB of memory; the largest machine has [\d.]+ GB: no machine of the farm can run it/);
  });

  for (const code of ["no_worker_for_type", "no_machine_meets", "waiting_for_parents", "scheduled", "key_at_limit"]) {
    it(`a job's page and the Jobs list say why: ${code} (console-why-${code}.png)`, async () => {
      await tab("jobs").click();
      await frame.locator(`#jobs button.link[title="${jobs[code]}"]`).click();
      const line = frame.locator("#wait-reason");
      await assertText(line, new RegExp(`^Why it waits: .+ ${code}$`), 30_000);
      assert.equal(await line.getAttribute("data-code"), code);
      const reason = (await line.textContent()).replace(/^Why it waits: /, "").replace(new RegExp(` ${code}$`), "");
      // the list's column says the same words as the page
      const cell = frame.locator(`#jobs .wait-cell[data-code="${code}"]`).first();
      assert.equal(await cell.textContent(), reason);
      await clearNotifications(page);
      const shot = await page.screenshot({ path: join(screenshots, `console-why-${code}.png`) });
      assert.equal(shot.readUInt32BE(16), 1024, "the screenshot is not 1024 px wide");
      await frame.locator("#close-job").click();
    });
  }

  it("the console's webview broke no Content Security Policy rule on the way", () => {
    const violations = session.browserLog.filter((line) => /Content Security Policy|Refused to (apply|execute|load|evaluate)/i.test(line));
    assert.deepEqual(violations, []);
  });
});
