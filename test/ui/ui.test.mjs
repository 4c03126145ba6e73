// UI test of the packaged extension: the .vsix from `npm run package`, installed into a fresh code-server and driven
// in headless Chromium. Screenshots go to test/artifacts/ui/. Run through test/ui/run-ui-tests.mjs.
import * as assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, describe, it } from "mocha";
import { launchChromium } from "../harness/browser.mjs";
import { installExtension, prepareProfile, requireInstalledCodeServer, startCodeServer } from "../harness/codeServer.mjs";
import { artifactsDir, extensionDir } from "../harness/paths.mjs";
import { onInterrupt } from "../harness/process.mjs";
import { startTestFarm } from "../harness/testFarm.mjs";
import { packageExtension, vsceList, vsixEntries } from "./packaging.mjs";
import { vsixListProblems } from "./vsixContents.mjs";
import {
  activityBarItem,
  farmWelcome,
  panelFrame,
  quickInputBox,
  quickInputTitle,
  statusBarItem,
  treeRow,
  waitForWorkbench,
} from "./workbench.mjs";

const screenshots = join(artifactsDir, "ui");
const UI_TIMEOUT = 30_000;

describe("the packaged .vsix", function () {
  this.timeout(120_000);
  let vsix;
  let listed;

  before(() => {
    vsix = packageExtension(extensionDir);
    listed = vsceList(extensionDir);
  });

  it("vsce ls lists only the bundles, media, manifest and documents", () => {
    assert.deepEqual(vsixListProblems(listed), [], `vsce ls listed:\n${listed.join("\n")}`);
  });

  it("the .vsix itself holds the same files", () => {
    assert.deepEqual(vsixEntries(vsix), listed);
  });

  describe("installed into code-server", function () {
    let root;
    let profile;
    let server;
    let farm;
    let browser;
    let page;
    const serverLog = [];
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
      rmSync(screenshots, { recursive: true, force: true });
      mkdirSync(screenshots, { recursive: true });
      root = mkdtempSync(join(tmpdir(), "farmhand-ui-"));
      farm = await startTestFarm();
      // Donate from this remote window, at once, whatever else loads the machine.
      profile = prepareProfile(root, {
        "farmhand.allowRemoteDonation": true,
        "farmhand.idleMinutes": 0,
        "farmhand.otherCpuThresholdPercent": 100,
        "farmhand.donateOnBattery": true,
      });
      installExtension(profile, vsix);
      server = await startCodeServer(profile, { onLog: (line) => serverLog.push(line) });
      browser = await launchChromium(profile.chromiumDir);
      page = await browser.context.newPage();
      page.on("console", (message) => browserLog.push(`${message.type()}: ${message.text()}`));
      await page.goto(`${server.origin}/?folder=${encodeURIComponent(profile.workspaceDir)}`);
      await waitForWorkbench(page, UI_TIMEOUT);
    });

    afterEach(async function () {
      if (this.currentTest?.state !== "failed" || !page) return;
      const name = this.currentTest.title.replace(/[^\w]+/g, "-").slice(0, 60);
      await page.screenshot({ path: join(screenshots, `failed-${name}.png`) }).catch(() => {});
    });

    after(async () => {
      if (page) await page.screenshot({ path: join(screenshots, "last.png") }).catch(() => {});
      writeFileSync(join(screenshots, "code-server.log"), serverLog.join("\n") + "\n");
      writeFileSync(join(screenshots, "browser.log"), browserLog.join("\n") + "\n");
      await cleanUp();
      removeInterruptHandler();
    });

    it("is installed from the .vsix into the fresh extensions dir", () => {
      const manifest = JSON.parse(readFileSync(join(extensionDir, "package.json"), "utf8"));
      const installed = readdirSync(profile.extensionsDir).filter((name) => name.startsWith("farmhand.farmhand-"));
      assert.deepEqual(installed, [`farmhand.farmhand-${manifest.version}`]);
      assert.ok(existsSync(join(profile.extensionsDir, installed[0], "dist", "extension.js")));
    });

    it("shows the Farmhand status-bar item, asking to join a farm", async () => {
      const item = statusBarItem(page);
      await item.waitFor({ timeout: UI_TIMEOUT });
      await assertText(item, /Farmhand: join a farm/);
      await page.screenshot({ path: join(screenshots, "1-status-bar-not-joined.png") });
    });

    it("opens the Farmhand view from the activity bar; the Farm tree shows its welcome", async () => {
      await activityBarItem(page).click();
      const welcome = farmWelcome(page);
      await welcome.waitFor({ timeout: UI_TIMEOUT });
      await assertText(welcome, /You have not joined a farm yet/);
      await assertText(welcome, /Join a Farm…/);
      await page.screenshot({ path: join(screenshots, "2-farm-view-welcome.png") });
    });

    it("shows the control panel, which the extension answers", async () => {
      const answer = panelFrame(page).locator("#answer");
      await answer.waitFor({ timeout: UI_TIMEOUT });
      await assertText(answer, /Connected to Farmhand/);
      await page.screenshot({ path: join(screenshots, "3-control-panel.png") });
    });

    it("joins the test farm through the welcome's Join a Farm… button; the tree shows the farm", async () => {
      await farmWelcome(page).getByRole("button", { name: "Join a Farm…" }).click();
      await answerQuickInput(page, /Join a Farm \(1\/2\)/, farm.url);
      await answerQuickInput(page, /Join a Farm \(2\/2\)/, farm.workerKey);
      await treeRow(page, "This machine").waitFor({ timeout: UI_TIMEOUT });
      // The Queue row's counts come from the farm itself (farm:overview on the test server).
      await assertText(treeRow(page, "Queue"), /Queue\s*0 pending/);
      await assertText(statusBarItem(page), /Farmhand: off/);
      await page.screenshot({ path: join(screenshots, "4-joined.png") });
    });

    it("turns donating on when the status-bar item is clicked, and off again", async () => {
      const item = statusBarItem(page);
      await item.click();
      await assertText(item, /Farmhand: on/);
      await page.screenshot({ path: join(screenshots, "5-donating.png") });
      await item.click();
      await assertText(item, /Farmhand: off/);
    });

    it("starts and stops donating from the control panel's button as well", async () => {
      const panel = panelFrame(page);
      const button = panel.locator("#toggle");
      await assertText(button, /Start donating/);
      await button.click();
      await assertText(statusBarItem(page), /Farmhand: on/);
      await assertText(panel.locator("#status"), /waiting for work/);
      await assertText(button, /Stop donating/);
      await page.screenshot({ path: join(screenshots, "6-donating-from-panel.png") });
      await button.click();
      await assertText(statusBarItem(page), /Farmhand: off/);
    });
  });
});

/** Types `answer` into the quick input once its title matches, and presses Enter. */
async function answerQuickInput(page, title, answer) {
  await quickInputTitle(page).filter({ hasText: title }).waitFor({ timeout: UI_TIMEOUT });
  const input = quickInputBox(page);
  await input.fill(answer);
  await input.press("Enter");
}

/** Waits up to UI_TIMEOUT for the locator's text to match, then fails showing the text it last had. */
async function assertText(locator, pattern) {
  const deadline = Date.now() + UI_TIMEOUT;
  let text = "";
  while (Date.now() < deadline) {
    text = (await locator.textContent({ timeout: UI_TIMEOUT }).catch(() => "")) ?? "";
    if (pattern.test(text)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.match(text, pattern);
}
