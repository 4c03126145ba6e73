import * as assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, donateNow, type FarmhandApi, joinTestFarm, setFarmhandSetting, waitUntil } from "./farmhand";
import { getJob, submitJob } from "./farmClient";

// The runners (test/harness/run-host-tests.mjs, run-desktop-tests.mjs) start the editor with these in its
// environment; the extension host adds its own VSCODE_* variables. A recipe the donor declared must see none of
// them. GITHUB_TOKEN is planted too, but code-server takes it out of its own environment (its --github-auth), so
// here it is checked only where it reached the extension host.
const PLANTED = ["AWS_SECRET_ACCESS_KEY", "FARMHAND_KEY"];
const PLANTED_IF_PRESENT = ["GITHUB_TOKEN"];
const ALLOWED = new Set(["PATH", "HOME", "LANG", "TZ", "TMPDIR", "RECIPE_SETTING"]);
const DONATE_NOW = donateNow("full");

describe("the environment a recipe sees when the extension runs it", function () {
  this.timeout(120_000);
  let api: FarmhandApi;

  before(async () => {
    api = await activateFarmhand();
    await joinTestFarm(api);
    const dir = mkdtempSync(join(tmpdir(), "farmhand-host-jobenv-"));
    const script = join(dir, "printenv.js");
    writeFileSync(script, "console.log(JSON.stringify({ env: process.env }));\n");
    await setFarmhandSetting("recipes", { printenv: { command: process.execPath, args: [script], env: { RECIPE_SETTING: "from the recipe" } } });
    for (const [key, value] of Object.entries(DONATE_NOW)) await setFarmhandSetting(key, value);
  });

  after(async () => {
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    for (const key of Object.keys(DONATE_NOW)) await setFarmhandSetting(key, undefined);
    await setFarmhandSetting("recipes", undefined);
  });

  it("sees only the allow-list and its own env: no FARMHAND_*, VSCODE_*, ELECTRON_*, NODE_OPTIONS or the planted secrets", async () => {
    for (const name of PLANTED) assert.ok(process.env[name], `the runner planted no ${name} in the extension host: the test proves nothing`);
    assert.ok(Object.keys(process.env).some((n) => n.startsWith("VSCODE_")), "the extension host has no VSCODE_* variables: the test proves nothing");
    if (!api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    const jobId = await submitJob("recipe.printenv", null);
    const job = await waitUntil("the recipe job finished", () => getJob(jobId), (j) => j.status === "succeeded" || j.status === "dead", 90_000);
    assert.equal(job.status, "succeeded", job.error);
    const { env } = job.result as { env: Record<string, string> };
    const unexpected = Object.keys(env).filter((name) => !ALLOWED.has(name) && !/^LC_[A-Z]+$/.test(name));
    assert.deepEqual(unexpected, []);
    assert.equal(env.RECIPE_SETTING, "from the recipe");
    const everything = JSON.stringify(env);
    for (const name of [...PLANTED, ...PLANTED_IF_PRESENT.filter((n) => process.env[n])]) {
      assert.ok(!everything.includes(process.env[name]!), `${name}'s value reached the recipe`);
    }
  });
});
