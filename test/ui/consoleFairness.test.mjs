// UI test of fair share in the console, in the packaged extension in code-server (the console opened with the operator
// key npm start provisions): the Access page's share form sets a client key's weight, most running and fairness
// weights (choosing the key fills the form with what it has, its fairness weights asked of the farm) and the keys'
// table shows them; the Overview lists each key with work in one table (running of its most, waiting, share of the
// last hour, oldest wait, jobs ended); the Jobs page filters by client key and fairness key, and a job's page says
// which key it counts against and why it waits. No CSP violation on the way. Screenshots: test/artifacts/ui-console/console-share.png, console-share-overview.png (the Overview's table at 1280 px).
// Run through test/ui/run-ui-tests.mjs.
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

describe("the console's view of fair share", function () {
  this.timeout(240_000);
  let session;
  let page;
  let frame;
  let http;
  let held;

  before(async () => {
    mkdirSync(screenshots, { recursive: true });
    const vsix = packageExtension(extensionDir);
    session = await startUiSession({
      vsix,
      name: "console-share",
      // this machine joins the farm but never donates: the jobs below wait for no worker of the test's own
      settings: { "farmhand.allowRemoteDonation": false, "farmhand.runApps": false, "workbench.colorTheme": "Default Dark Modern" },
      env: (farm) => ({ FARMHAND_JOIN_URL: farm.url, FARMHAND_JOIN_TOKEN: farm.tokens.join, FARMHAND_OPERATOR_KEY: farm.operatorKey }),
    });
    page = session.page;
    http = new ConvexHttpClient(session.farm.url);
  });

  afterEach(async function () {
    await screenshotFailure(this.currentTest, page, screenshots, "console-share-");
  });

  after(async () => {
    await session?.stop();
  });

  const tab = (name) => frame.locator(`#tabs vscode-tab-header[data-page="${name}"]`);

  it("the Access page's share form sets a key's weight, most running and fairness weights; the table shows them", async () => {
    await activityBarItem(page).click();
    await treeRow(page, "This machine").waitFor({ timeout: UI_TIMEOUT });
    await runCommand(page, "Farmhand: Open Console");
    frame = await consoleFrame(page);
    await runCommand(page, "View: Close Primary Side Bar");
    await tab("access").click();
    const form = frame.locator("#limits-form");
    await form.waitFor({ timeout: UI_TIMEOUT });
    const field = (id) => frame.locator(`#${id} input`);
    await assertText(frame.locator("#client-keys"), /test client[\s\S]*active[\s\S]*1\s*no limit\s*0/);
    // choosing the farm's client key fills the form with what it has: the defaults
    await frame.locator("#limits-key").click();
    await frame.locator("#limits-key").getByRole("option", { name: "test client", exact: true }).click();
    assert.equal(await field("limits-weight").inputValue(), "1");
    assert.equal(await field("limits-max-running").inputValue(), "");
    await field("limits-weight").fill("3");
    await field("limits-max-running").fill("1");
    await field("limits-fairness-weights").fill("gold=4, free=0.5");
    await frame.locator("#limits-save").click();
    await assertText(frame.locator("#notice"), /Client key “test client”: weight 3, at most 1 running, 2 fairness weights\./);
    await assertText(frame.locator("#client-keys"), /test client[\s\S]*active[\s\S]*3\s*1\s*2/);
    const listed = (await http.query(anyApi.consoleAccess.fairnessWeights, { apiKey: session.farm.operatorKey, clientKeyId: (await keyId()) })).map((e) => `${e.fairnessKey}=${e.weight}`);
    assert.deepEqual(listed, ["free=0.5", "gold=4"]);
    // a weight the farm would refuse is marked on the field and not sent
    await field("limits-weight").fill("5000");
    await frame.locator("#limits-save").click();
    await assertText(frame.locator("#notice"), /Client key “test client”: weight 3/);
    assert.equal(await frame.locator("#limits-weight").getAttribute("invalid"), "");
  });

  async function keyId() {
    const access = await http.query(anyApi.consoleAccess.list, { apiKey: session.farm.operatorKey });
    return access.clientKeys.find((k) => k.name === "test client").clientKeyId;
  }

  it("the Overview lists the key in one table: running of its most, waiting, share of the last hour, oldest wait, jobs ended", async () => {
    const { clientKey, workerKey } = session.farm;
    const ids = await http.mutation(anyApi.jobs.submitBatch, {
      clientKey,
      jobs: [{ type: "demo.echo", fairnessKey: "gold" }, { type: "demo.echo", fairnessKey: "free" }, { type: "demo.echo", fairnessKey: "gold" }],
    });
    // the seeded worker takes one: the key is then at its most (1), and the other two wait
    const [claim] = await http.mutation(anyApi.workers.claim, { apiKey: workerKey, capabilities: ["demo.echo"], max: 3 });
    assert.ok(claim, "the worker got no job");
    held = ids.find((id) => id !== claim.jobId);
    await tab("overview").click();
    // one table per client key: its share of the farm and its jobs ended (ok / dead / canceled, share of all ended)
    await assertText(frame.locator("#client-key-shares"), /test client\s*3\s*1 of 1\s*2\s*100 %\s*[\d.]+ \w+\s*\d+ \/ \d+ \/ \d+\s*[\d.]+ ?%/, 30_000);
    assert.equal(await frame.locator("#client-keys").count(), 0, "the Overview still shows a second table of client keys");
    // at 1280 px every header of the table shows whole: none is cut by an ellipsis
    const cut = await frame.locator("#client-key-shares vscode-table-header-cell").evaluateAll((cells) =>
      cells.filter((c) => {
        const wrapper = c.shadowRoot?.querySelector(".wrapper");
        return wrapper ? wrapper.scrollWidth > wrapper.clientWidth : false;
      }).map((c) => c.textContent),
    );
    assert.deepEqual(cut, [], "headers cut at 1280 px");
    await page.screenshot({ path: join(screenshots, "console-share-overview.png") });
  });

  it("the Jobs page filters by client key and fairness key; a held job's page says which key it counts against and why it waits", async () => {
    await tab("jobs").click();
    await frame.locator("#client-key-filter").waitFor({ timeout: UI_TIMEOUT });
    await frame.locator("#client-key-filter").click();
    await frame.locator("#client-key-filter").getByRole("option", { name: "test client", exact: true }).click();
    // each row names its key and fairness key ("test client · gold"); the held ones also say why they wait, naming the key
    await assertText(frame.locator("#jobs"), (text) => (text.match(/test client · (gold|free)/g) ?? []).length === 3);
    await frame.locator("#filter-fairnessKey input").fill("free");
    await frame.locator("#filter-apply").click();
    await assertText(frame.locator("#jobs"), (text) => /test client · free/.test(text) && !/gold/.test(text));
    await frame.locator("#filter-fairnessKey input").fill("");
    await frame.locator("#filter-apply").click();
    await frame.locator(`#jobs button.link[title="${held}"]`).click();
    await assertText(frame.locator("#counts-against"), /Counts against client key test client \(weight 3, at most 1 running\), fairness key (gold|free)\./);
    await assertText(frame.locator("#job"), /Why it waits: client key 'test client' is at its limit of 1 running/);
    await clearNotifications(page);
    await page.screenshot({ path: join(screenshots, "console-share.png") });
  });

  it("the console's webview broke no Content Security Policy rule on the way", () => {
    const violations = session.browserLog.filter((line) => /Content Security Policy|Refused to (apply|execute|load|evaluate)/i.test(line));
    assert.deepEqual(violations, []);
  });
});
