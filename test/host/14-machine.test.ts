// The donor's machine respected: a program the donor named (farmhand.pauseWhileRunning) pauses donating, and its
// name shows on every surface at once — the status bar and its tooltip, the Farm tree, the control panel — with the
// button that lifts it; a program of farmhand.pauseGpuWhileRunning holds GPU jobs only, and says so everywhere too.
// The program is a real process this test starts: a copy of `sleep` under a name of its own (Linux /proc).
import * as assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, donateNow, expectsRemoteWindow, joinTestFarm, setFarmhandSetting, waitUntil, type FarmhandApi, type FarmhandSurfaces } from "./farmhand";

const DONATE_NOW = donateNow("full");
const STEP_TIMEOUT = 30_000;
const SETTINGS = [...Object.keys(DONATE_NOW), "pauseWhileRunning", "pauseGpuWhileRunning"];

describe("issue 35: a program the donor named pauses donating, on every surface at once", function () {
  this.timeout(6 * STEP_TIMEOUT);
  let api: FarmhandApi;
  const dir = mkdtempSync(join(tmpdir(), "farmhand-host-programs-"));
  const running: ChildProcess[] = [];
  const GAME = `farmhand-host-game-${process.pid}`;
  const EDITOR = `farmhand-host-editor-${process.pid}`;

  /** The program `name` running: a copy of `sleep` under that name. */
  function startProgram(name: string): ChildProcess {
    const path = join(dir, name);
    copyFileSync("/bin/sleep", path);
    const child = spawn(path, ["600"], { stdio: "ignore" });
    running.push(child);
    return child;
  }
  /** The tooltip is Markdown with its punctuation escaped: read it as text. */
  const plain = (markdown: string) => markdown.replace(/\\([\\`*_{}[\]()#+\-.!|<>])/g, "$1");
  const machineRow = (s: FarmhandSurfaces) => s.tree.rows.find((r) => r.startsWith("This machine")) ?? "";
  /** Every surface drew a snapshot that `ok` accepts (the store hands them all the same one). */
  const everywhere = (what: string, ok: (s: FarmhandSurfaces) => boolean) => waitUntil(what, () => api.surfaces(), (s) => s.panel !== undefined && s.tree.at !== undefined && ok(s), STEP_TIMEOUT);

  before(async function () {
    if (process.platform !== "linux") this.skip(); // the programs are read from /proc here
    api = await activateFarmhand();
    await joinTestFarm(api);
    for (const [key, value] of Object.entries(DONATE_NOW)) await setFarmhandSetting(key, value);
    await vscode.commands.executeCommand("workbench.view.extension.farmhand");
    await vscode.commands.executeCommand("farmhand.panel.focus");
  });

  after(async () => {
    for (const child of running) child.kill("SIGKILL");
    if (api?.getState().wanted) await vscode.commands.executeCommand("farmhand.stopDonating");
    for (const key of SETTINGS) await setFarmhandSetting(key, undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it("pauses while it runs: its name on the status bar's tooltip, the tree and the panel, with the button that opens its setting; donating goes on once it ends", async () => {
    const game = startProgram(GAME);
    await setFarmhandSetting("pauseWhileRunning", ["steam", GAME.toUpperCase()]);
    await vscode.commands.executeCommand("farmhand.startDonating");
    const reason = `${GAME.toUpperCase()} is running`;
    const s = await everywhere("paused for the program", (x) => x.panel?.status.kind === "paused" && x.panel.status.reason === reason && x.statusBar.at === x.panel.at);
    assert.equal(api.getState().donating, false);
    assert.match(s.statusBar.text, /Farmhand: paused$/);
    assert.match(plain(s.statusBar.tooltip), new RegExp(`paused: ${reason}`));
    assert.match(s.statusBar.tooltip, /\[Programs That Pause Donating\]\(command:farmhand\.fixPause\)/);
    assert.match(machineRow(s), new RegExp(`paused: ${reason}`));
    assert.deepEqual(s.panel?.actions.fix, { setting: "farmhand.pauseWhileRunning", label: "Programs That Pause Donating", how: "open", tab: expectsRemoteWindow() ? "remote" : "user" });

    await vscode.commands.executeCommand("farmhand.fixPause");
    await waitUntil("the settings editor", () => vscode.window.tabGroups.activeTabGroup.activeTab?.label ?? "", (label) => /Settings/.test(label), 10_000);
    await vscode.commands.executeCommand("workbench.action.closeActiveEditor");

    game.kill("SIGKILL");
    // looked for every 10 s while donating is on
    const on = await everywhere("donating again once it ended", (x) => x.panel?.status.kind === "waiting" && x.statusBar.at === x.panel.at);
    assert.match(on.statusBar.text, /Farmhand: on$/);
    assert.match(machineRow(on), /on, waiting for work/);
  });

  it("a program of pauseGpuWhileRunning holds GPU jobs only: donating goes on, and every surface says GPU jobs are paused and why", async () => {
    const editor = startProgram(EDITOR);
    await setFarmhandSetting("pauseGpuWhileRunning", [EDITOR]);
    if (!api.getState().wanted) await vscode.commands.executeCommand("farmhand.startDonating");
    const s = await everywhere("GPU jobs paused", (x) => x.panel?.gpuPause !== undefined && x.statusBar.at === x.panel.at && x.tree.at === x.panel.at);
    assert.equal(api.getState().donating, true);
    assert.match(s.statusBar.text, /Farmhand: on · GPU paused$/);
    assert.match(plain(s.statusBar.tooltip), new RegExp(`on, waiting for work · GPU jobs paused: ${EDITOR} is running`));
    assert.match(s.statusBar.tooltip, /\[Programs That Pause GPU Jobs\]\(command:farmhand\.fixPause\)/);
    assert.match(machineRow(s), new RegExp(`GPU jobs paused: ${EDITOR} is running`));
    assert.equal(s.panel?.actions.fix?.setting, "farmhand.pauseGpuWhileRunning");

    editor.kill("SIGKILL");
    const gone = await everywhere("GPU jobs no longer paused", (x) => x.panel !== undefined && x.panel.gpuPause === undefined && !/GPU/.test(x.statusBar.text));
    assert.match(gone.statusBar.text, /Farmhand: on$/);
  });
});
