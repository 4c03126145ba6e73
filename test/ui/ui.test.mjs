// UI test of the packaged extension: the .vsix from `npm run package`, installed into a fresh code-server and driven
// in headless Chromium. Screenshots go to test/artifacts/ui/. Run through test/ui/run-ui-tests.mjs.
import * as assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "mocha";
import { launchChromium } from "../harness/browser.mjs";
import { installExtension, prepareProfile, requireInstalledCodeServer, startCodeServer } from "../harness/codeServer.mjs";
import { artifactsDir, extensionDir } from "../harness/paths.mjs";
import { onInterrupt } from "../harness/process.mjs";
import { packageExtension, vsceList, vsixEntries } from "./packaging.mjs";
import { vsixListProblems } from "./vsixContents.mjs";
import { activityBarItem, farmWelcome, panelFrame, statusBarItem, waitForWorkbench } from "./workbench.mjs";

const screenshots = join(artifactsDir, "ui");
const UI_TIMEOUT = 30_000;

describe("the packaged .vsix", function () {
  this.timeout(120_000);
  let vsix;

  before(() => {
    vsix = packageExtension(extensionDir);
  });

  it("vsce ls lists only the bundles, media, manifest and documents", () => {
    const files = vsceList(extensionDir);
    assert.deepEqual(vsixListProblems(files), [], `vsce ls listed:\n${files.join("\n")}`);
  });

  it("the .vsix itself holds the same files", () => {
    assert.deepEqual(vsixEntries(vsix), vsceList(extensionDir));
  });

  describe("installed into code-server", function () {
    let root;
    let profile;
    let server;
    let browser;
    let page;
    const serverLog = [];
    let removeInterruptHandler = () => {};

    const cleanUp = async () => {
      await browser?.close();
      await server?.stop();
      if (root) rmSync(root, { recursive: true, force: true });
      browser = server = root = undefined;
    };

    before(async () => {
      removeInterruptHandler = onInterrupt(cleanUp);
      requireInstalledCodeServer();
      rmSync(screenshots, { recursive: true, force: true });
      mkdirSync(screenshots, { recursive: true });
      root = mkdtempSync(join(tmpdir(), "farmhand-ui-"));
      profile = prepareProfile(root, { "farmhand.allowRemoteDonation": true, "farmhand.idleMinutes": 0 });
      installExtension(profile, vsix);
      server = await startCodeServer(profile, { onLog: (line) => serverLog.push(line) });
      browser = await launchChromium(profile.chromiumDir);
      page = await browser.context.newPage();
      await page.goto(`${server.origin}/?folder=${encodeURIComponent(profile.workspaceDir)}`);
      await waitForWorkbench(page, UI_TIMEOUT);
    });

    after(async () => {
      if (page) await page.screenshot({ path: join(screenshots, "last.png") }).catch(() => {});
      writeFileSync(join(screenshots, "code-server.log"), serverLog.join("\n") + "\n");
      await cleanUp();
      removeInterruptHandler();
    });

    it("is installed from the .vsix into the fresh extensions dir", () => {
      const manifest = JSON.parse(readFileSync(join(extensionDir, "package.json"), "utf8"));
      const installed = readdirSync(profile.extensionsDir).filter((name) => name.startsWith("farmhand.farmhand-"));
      assert.deepEqual(installed, [`farmhand.farmhand-${manifest.version}`]);
      assert.ok(existsSync(join(profile.extensionsDir, installed[0], "dist", "extension.js")));
    });

    it("shows the Farmhand status-bar item, off", async () => {
      const item = statusBarItem(page);
      await item.waitFor({ timeout: UI_TIMEOUT });
      await assertText(item, /Farmhand: off/);
      await page.screenshot({ path: join(screenshots, "status-bar-off.png") });
    });

    it("turns donating on when the status-bar item is clicked", async () => {
      const item = statusBarItem(page);
      await item.click();
      await assertText(item, /Farmhand: on/);
      await page.screenshot({ path: join(screenshots, "status-bar-on.png") });
    });

    it("opens the Farmhand view from the activity bar and shows the Farm tree's welcome", async () => {
      await activityBarItem(page).click();
      const welcome = farmWelcome(page);
      await welcome.waitFor({ timeout: UI_TIMEOUT });
      await assertText(welcome, /Join a farm/i);
      await assertText(welcome, /You have not joined a farm yet/);
      await page.screenshot({ path: join(screenshots, "farm-view.png") });
    });

    it("shows the control panel, which the extension answers", async () => {
      const answer = panelFrame(page).locator("#answer");
      await answer.waitFor({ timeout: UI_TIMEOUT });
      await assertText(answer, /Connected to Farmhand/);
      await page.screenshot({ path: join(screenshots, "control-panel.png") });
    });
  });
});

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
