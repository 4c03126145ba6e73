// Issue 24: surfaces never disagree, and ages move. While jobs start, stream progress and end, every sample of the
// status bar, the Farm tree and the control panel must show the same snapshot of the donor state (the one the store
// handed to all of them in one call), and the same number of jobs running here; with nothing changing, the ages
// on screen still move on while the views are visible.
import * as assert from "node:assert/strict";
import { after, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, donateNow, type FarmhandApi, type FarmhandSurfaces, joinTestFarm, setFarmhandSetting, waitUntil } from "./farmhand";
import { cancelJob, submitJob } from "./farmClient";

const DONATE_NOW = donateNow("full", { maxConcurrentJobs: 2 });
const TIMEOUT = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Jobs running here as each surface says: the status bar's "N jobs", the tree's rows under This machine, the panel's list. */
function jobCounts(s: FarmhandSurfaces): { statusBar: number; tree: number; panel: number | undefined } {
  const bar = /Farmhand: (\d+) jobs?$/.exec(s.statusBar.text);
  const machine = s.tree.rows.findIndex((r) => r.startsWith("This machine"));
  const tree = machine < 0 ? 0 : s.tree.rows.slice(machine + 1).findIndex((r) => !r.startsWith("  "));
  const below = machine < 0 ? [] : s.tree.rows.slice(machine + 1, tree < 0 ? undefined : machine + 1 + tree);
  return {
    statusBar: bar ? Number(bar[1]) : 0,
    tree: below.filter((r) => r !== "  No jobs running here").length,
    panel: s.panel?.jobs.length,
  };
}

describe("every surface draws the same snapshot, and ages move while a view is visible (issue 24)", function () {
  this.timeout(4 * TIMEOUT);
  let api: FarmhandApi;
  const jobs: string[] = [];

  before(async () => {
    api = await activateFarmhand();
    await joinTestFarm(api);
    for (const [key, value] of Object.entries(DONATE_NOW)) await setFarmhandSetting(key, value);
    await vscode.commands.executeCommand("workbench.view.extension.farmhand");
    await vscode.commands.executeCommand("farmhand.panel.focus");
  });

  after(async () => {
    for (const id of jobs) await cancelJob(id).catch(() => undefined);
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    for (const key of Object.keys(DONATE_NOW)) await setFarmhandSetting(key, undefined);
  });

  it("while jobs start, report progress and end, each sample shows one snapshot and one job count on all three", async () => {
    if (!api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    await waitUntil("waiting for work", () => api.getState(), (s) => s.status.kind === "waiting", 15_000);
    // slow jobs (progress every second) starting and ending one after another while the surfaces are sampled
    const before = api.getState().contribution.succeeded;
    for (const seconds of [2, 4, 3]) jobs.push(await submitJob("demo.slow", { seconds }));
    const samples: FarmhandSurfaces[] = [];
    // until the three are done here, and a second more (the surfaces show none running)
    const deadline = Date.now() + 45_000;
    let doneAt: number | undefined;
    while (Date.now() < deadline && (doneAt === undefined || Date.now() < doneAt + 1_000)) {
      const s = api.surfaces();
      samples.push(s);
      if (doneAt === undefined && s.panel && s.panel.contribution.succeeded >= before + 3) doneAt = Date.now();
      await sleep(37);
    }
    const shown = samples.filter((s) => s.panel && s.tree.at !== undefined);
    assert.ok(shown.length > 100, `the panel and the tree were visible in only ${shown.length} samples`);
    const texts = [...new Set(shown.map((s) => s.statusBar.text))];
    const counts = new Set(shown.map((s) => jobCounts(s).statusBar));
    assert.ok(counts.has(1) && counts.size > 1, `the samples did not see jobs start and end; the status bar said: ${texts.join(" | ")}`);
    for (const s of shown) {
      assert.deepEqual([s.tree.at, s.panel?.at], [s.statusBar.at, s.statusBar.at], `surfaces drew different snapshots: ${JSON.stringify({ statusBar: s.statusBar.at, tree: s.tree.at, panel: s.panel?.at })}`);
      const n = jobCounts(s);
      assert.deepEqual([n.tree, n.panel], [n.statusBar, n.statusBar], `job counts differ: ${JSON.stringify(n)} (${s.statusBar.text})`);
    }
  });

  it("with nothing else changing, the snapshot moves on every second while a view is visible (ages tick)", async () => {
    if (!api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    await waitUntil("donating, no job running", () => api.getState(), (s) => s.jobs.length === 0 && s.status.kind === "waiting", TIMEOUT);
    const row = (s: FarmhandSurfaces) => s.tree.rows.find((r) => r.includes("(this machine)")) ?? "";
    // Nothing else changes between the two looks: the farm's figures the panel was sent stay the same (the summary
    // is rewritten at most every 5 s after a change; a rewrite in between starts the looking again from there).
    const figures = (s: FarmhandSurfaces) => JSON.stringify(s.panel?.farm.figures);
    let first = api.surfaces();
    const later = await waitUntil(
      "the snapshot and this machine's age moving on while the farm's figures stay the same",
      () => {
        const look = api.surfaces();
        if (figures(look) !== figures(first)) first = look;
        return look;
      },
      (look) => (look.statusBar.at ?? 0) - (first.statusBar.at ?? 0) >= 1_000 && row(look) !== row(first),
      TIMEOUT,
    );
    assert.equal(figures(later), figures(first));
    assert.equal(later.tree.at, later.statusBar.at);
    assert.equal(later.panel?.at, later.statusBar.at);
    const me = row(later);
    assert.match(me, /online · up to \d+ jobs? · seen \d+/);
  });
});
