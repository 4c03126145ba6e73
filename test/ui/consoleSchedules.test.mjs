// UI test of the console's Schedules page in the packaged extension, in code-server (the console opened with the
// operator key npm start provisions): two schedules made with schedules:create show their next runs and, once one
// ticks, its last run's job as a link to the job's page; Pause shows the schedule paused at once and a resume made
// elsewhere shows live (a subscription, not polling); Remove… asks first (Keep It changes nothing), then removes; a
// tick that cannot submit shows why, and a schedule whose client key was revoked shows it paused, saying so, with
// Remove only; an org left without schedules is told how to make one. At 1024 px wide no button is cut off; the
// screenshot is test/artifacts/ui-console/console-schedules.png. No CSP violation on the way. Run through
// test/ui/run-ui-tests.mjs.
// The schedules are made as soon as the farm is up, while code-server starts: the minute's tick (up to 60 s away)
// then overlaps the start instead of adding to it.
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
/** A minute's tick comes within 60 s, and its job shows a moment after. */
const TICK_TIMEOUT = 75_000;

describe("the console's Schedules page", function () {
  this.timeout(240_000);
  let session;
  let page;
  let frame;
  let http;
  let created;

  before(async () => {
    mkdirSync(screenshots, { recursive: true });
    const vsix = packageExtension(extensionDir);
    session = await startUiSession({
      vsix,
      name: "console-schedules",
      settings: { "farmhand.allowRemoteDonation": true, "farmhand.runApps": false, "workbench.colorTheme": "Default Dark Modern" },
      env: (farm) => {
        created = createSchedules(farm);
        created.catch(() => undefined); // awaited (and reported) by the first test
        return { FARMHAND_JOIN_URL: farm.url, FARMHAND_JOIN_TOKEN: farm.tokens.join, FARMHAND_OPERATOR_KEY: farm.operatorKey };
      },
    });
    page = session.page;
    http = new ConvexHttpClient(session.farm.url);
  });

  afterEach(async function () {
    await screenshotFailure(this.currentTest, page, screenshots, "console-schedules-");
  });

  after(async () => {
    await session?.stop();
  });

  async function createSchedules(farm) {
    const client = new ConvexHttpClient(farm.url);
    const { clientKey } = farm;
    await client.mutation(anyApi.schedules.create, { clientKey, name: "nightly-report", cron: "0 2 * * *", timezone: "Europe/Paris", job: { type: "demo.echo", payload: {} } });
    await client.mutation(anyApi.schedules.create, { clientKey, name: "every-minute", cron: "* * * * *", overlap: "allow", job: { type: "demo.echo", payload: { n: 1 } } });
  }

  const row = (name) => frame.locator("#schedules vscode-table-row").filter({ hasText: name });

  it("two schedules show their cron in words, next runs in local time, overlap and state", async () => {
    await created;
    const { clientKey } = session.farm;
    await activityBarItem(page).click();
    await treeRow(page, "This machine").waitFor({ timeout: UI_TIMEOUT });
    await runCommand(page, "Farmhand: Open Console");
    frame = await consoleFrame(page);
    await runCommand(page, "View: Close Primary Side Bar");
    await frame.locator('#tabs vscode-tab-header[data-page="schedules"]').click();
    const nightly = row("nightly-report");
    const minutely = row("every-minute");
    await assertText(nightly, /nightly-report\s*demo\.echo\s*every day at 02:00 \(Europe\/Paris\)/);
    await assertText(minutely, /every-minute\s*demo\.echo\s*every minute \(UTC\)\s*[\s\S]*allow\s*active/);
    // three next runs each, in this machine's time
    const nextRuns = await frame.locator("#schedules").evaluate((table) =>
      Array.from(table.querySelectorAll("vscode-table-row")).map((r) => r.children[3]?.textContent?.split("\n").length ?? 0),
    );
    assert.deepEqual(nextRuns, [3, 3]);
    const listed = await http.query(anyApi.schedules.list, { clientKey });
    const local = listed.find((s) => s.name === "nightly-report").nextRuns.map((t) => new Date(t).toLocaleString(undefined, { month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }));
    await assertText(nightly, (text) => local.every((t) => text.includes(t)));
    await assertText(nightly, /not yet/);
  });

  it("Pause shows the schedule paused at once; a resume made elsewhere shows live", async () => {
    const nightly = row("nightly-report");
    await nightly.locator("vscode-button.pause").click();
    await assertText(nightly, /nightly-report[\s\S]*paused\s*skip while running\s*paused/);
    await nightly.locator("vscode-button.resume").waitFor({ timeout: UI_TIMEOUT });
    // resumed through the API with the client key: the page follows without being asked
    await http.mutation(anyApi.schedules.resume, { clientKey: session.farm.clientKey, name: "nightly-report" });
    await assertText(nightly, /skip while running\s*active/);
    await nightly.locator("vscode-button.pause").waitFor({ timeout: UI_TIMEOUT });
  });

  it("a tick shows its job in the last run, linked to the job's page", async () => {
    const minutely = row("every-minute");
    await assertText(minutely.locator(".last-run"), /[a-z0-9]{8}\s*(pending|running|succeeded)/, TICK_TIMEOUT);
    await minutely.locator(".last-run button.link").click();
    await assertText(frame.locator("#job"), /demo\.echo · (pending|running|succeeded)/);
    await frame.locator("#close-job").click();
    await frame.locator('#tabs vscode-tab-header[data-page="schedules"]').click();
    await assertText(minutely, /every-minute/);
  });

  it("at 1024 px wide nothing is cut off (console-schedules.png)", async () => {
    const before = page.viewportSize();
    await page.setViewportSize({ width: 1024, height: 768 });
    try {
      const buttons = frame.locator("#schedules vscode-button");
      await buttons.first().waitFor({ timeout: UI_TIMEOUT });
      await new Promise((resolve) => setTimeout(resolve, 500)); // the table sizes its columns
      await clearNotifications(page);
      await page.screenshot({ path: join(screenshots, "console-schedules.png") });
      assert.equal((await page.screenshot()).readUInt32BE(16), 1024, "the screenshot is not 1024 px wide");
      assert.equal(await buttons.count(), 4);
      for (let i = 0; i < (await buttons.count()); i++) {
        const fit = await buttons.nth(i).evaluate((button) => {
          const cell = button.closest("vscode-table-cell").getBoundingClientRect();
          const box = button.getBoundingClientRect();
          return { inCell: box.left >= cell.left - 0.5 && box.right <= cell.right + 0.5 && box.right <= window.innerWidth, box: [box.left, box.right], cell: [cell.left, cell.right] };
        });
        assert.ok(fit.inCell, `button #${i} is cut off: ${JSON.stringify(fit)}`);
      }
    } finally {
      if (before) await page.setViewportSize(before);
    }
  });

  it("Remove… asks first: Keep It changes nothing; Remove takes the schedule away", async () => {
    const nightly = row("nightly-report");
    const dialog = page.locator(".monaco-dialog-box");
    await nightly.locator("vscode-button.remove").click();
    await assertText(dialog, /Remove the schedule “nightly-report”\? It submits no more jobs; the jobs it submitted stay\./);
    await dialog.getByRole("button", { name: "Keep It" }).click();
    await assertText(frame.locator("#schedules"), /nightly-report/);
    await nightly.locator("vscode-button.remove").click();
    await dialog.getByRole("button", { name: "Remove nightly-report" }).click();
    await assertText(frame.locator("#notice"), /Schedule “nightly-report” removed\./);
    await assertText(frame.locator("#schedules"), (text) => !text.includes("nightly-report") && text.includes("every-minute"));
    const names = (await http.query(anyApi.schedules.list, { clientKey: session.farm.clientKey })).map((s) => s.name);
    assert.deepEqual(names, ["every-minute"]);
  });

  it("a tick that cannot submit shows why; a schedule whose client key is revoked shows it paused, saying so, with Remove only", async () => {
    const { operatorKey } = session.farm;
    const { key: clientKey, clientKeyId } = await http.mutation(anyApi.consoleAccess.createClientKey, { apiKey: operatorKey, name: "ui-sealed" });
    await http.mutation(anyApi.jobs.submitBatch, { clientKey, jobs: [{ type: "demo.echo", batchId: "ui-sealed" }], seal: true });
    await http.mutation(anyApi.schedules.create, { clientKey, name: "refused", cron: "* * * * *", overlap: "allow", job: { type: "demo.echo", batchId: "ui-sealed" } });
    const refused = row("refused");
    await assertText(refused.locator(".schedule-error"), /Not submitted .+: invalid_argument: batch "ui-sealed" is sealed/, TICK_TIMEOUT);
    await http.mutation(anyApi.consoleAccess.revokeClientKey, { apiKey: operatorKey, clientKeyId });
    await assertText(refused.locator(".paused-reason"), /its client key “ui-sealed” \(fh_c_\S*…\) was revoked/);
    assert.equal(await refused.locator("vscode-button.resume").count(), 0, "a schedule whose key was revoked offers Resume");
    await refused.locator("vscode-button.remove").click();
    await page.locator(".monaco-dialog-box").getByRole("button", { name: "Remove refused" }).click();
    await assertText(frame.locator("#schedules"), (text) => !text.includes("refused") && text.includes("every-minute"));
  });

  it("an org left without schedules is told how to make one", async () => {
    await row("every-minute").locator("vscode-button.remove").click();
    await page.locator(".monaco-dialog-box").getByRole("button", { name: "Remove every-minute" }).click();
    await assertText(frame.locator("#no-schedules"), /No schedules yet/);
    await assertText(frame.locator("#schedules-howto"), /schedules\.create[\s\S]*cron: "0 2 \* \* \*"/);
  });

  it("the console's webview broke no Content Security Policy rule on the way", () => {
    const violations = session.browserLog.filter((line) => /Content Security Policy|Refused to (apply|execute|load|evaluate)/i.test(line));
    assert.deepEqual(violations, []);
  });
});
