// One truthful state everywhere: the engine is driven through off → on → working → draining → off, offline and
// revoked, and at each step the status bar, the Farm tree, the control panel and the context keys must agree.
import * as assert from "node:assert/strict";
import { createServer, connect, type Server, type Socket } from "node:net";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import { after, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, donateNow, expectsRemoteWindow, type FarmhandApi, type FarmhandSurfaces, setFarmhandSetting, testFarm, waitUntil } from "./farmhand";
import { submitPrimes } from "./farmClient";

const DONATE_NOW = donateNow("light");
/** A few seconds of sieving: still running when Finish Current Jobs and Stop is asked for. */
const N_LONG = 300_000_000;
const STEP_TIMEOUT = 30_000;

/** A TCP proxy to the farm that the test can cut and mend: the farm "goes down" for this window only. */
class FarmProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;
  constructor(private readonly target: URL) {}

  async open(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(Number(this.target.port), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("close", () => this.sockets.delete(s));
        s.on("error", () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, "127.0.0.1", resolve));
    const address = this.server.address();
    if (address && typeof address !== "string") this.port = address.port;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }
}

describe("one donor state on every surface", function () {
  this.timeout(4 * STEP_TIMEOUT);
  let api: FarmhandApi;
  let proxy: FarmProxy;
  let apiKey: string;
  const farm = () => new ConvexHttpClient(testFarm().url);

  /** Waits until the state is `kind`, then gives every surface a moment to render it (they redraw in bursts). */
  async function reach(kind: string, timeoutMs = STEP_TIMEOUT): Promise<FarmhandSurfaces> {
    await waitUntil(`state ${kind}`, () => api.getState().status.kind, (k) => k === kind, timeoutMs);
    return waitUntil(`every surface showing ${kind}`, () => api.surfaces(), (s) => s.panel?.status.kind === kind && s.contextKeys["farmhand.state"] === kind, 5_000);
  }
  /** The tooltip is Markdown with its punctuation escaped: read it as text. */
  const plain = (markdown: string) => markdown.replace(/\\([\\`*_{}[\]()#+\-.!|<>])/g, "$1");
  const machineRow = (s: FarmhandSurfaces) => s.tree.rows.find((r) => r.startsWith("This machine")) ?? "";

  before(async () => {
    api = await activateFarmhand();
    for (const [key, value] of Object.entries(DONATE_NOW)) await setFarmhandSetting(key, value);
    // A machine of its own (the wide token), behind a proxy this test can cut.
    const token = process.env.FARMHAND_TEST_WIDE_TOKEN;
    assert.ok(token, "the runner passed no FARMHAND_TEST_WIDE_TOKEN");
    ({ apiKey } = (await farm().mutation(anyApi.workers.enroll, { token, name: "states test", machineId: "states-test", capabilities: ["demo.primes", "demo.echo"] })) as { apiKey: string });
    proxy = new FarmProxy(new URL(testFarm().url));
    await proxy.open();
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    await vscode.commands.executeCommand("farmhand.join", { url: proxy.url, token: apiKey });
    // The Farm view and the control panel visible: they watch the farm and render.
    await vscode.commands.executeCommand("workbench.view.extension.farmhand");
    await vscode.commands.executeCommand("farmhand.panel.focus");
  });

  after(async () => {
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.stopDonating");
    await proxy.cut();
    // Back on the shared test machine, for any suite after this one.
    const { url, workerKey } = testFarm();
    await vscode.commands.executeCommand("farmhand.join", { url, token: workerKey });
    for (const key of [...Object.keys(DONATE_NOW), "timeWindows"]) await setFarmhandSetting(key, undefined);
  });

  it("off: every surface says off, and the title button starts donating", async () => {
    const s = await reach("off");
    assert.match(s.statusBar.text, /Farmhand: off$/);
    assert.match(plain(s.statusBar.tooltip), /Click to start donating/);
    assert.match(machineRow(s), /^This machine — off$/);
    assert.equal(s.panel?.toggle, "start");
    assert.equal(s.contextKeys["farmhand.toggleAction"], "start");
    // The machine row says what the policy runs (light: 1 at once), not the farm's grant (8).
    const me = await waitUntil("this machine in Workers", () => api.surfaces().tree.rows.find((r) => r.includes("(this machine)")), (r) => r !== undefined, 10_000);
    assert.doesNotMatch(me ?? "", /up to 8/);
  });

  it("on → working → draining → off: status bar, tree, panel and title button agree at every step", async () => {
    await vscode.commands.executeCommand("farmhand.startDonating");
    let s = await reach("waiting");
    assert.match(s.statusBar.text, /Farmhand: on$/);
    assert.match(machineRow(s), /on, waiting for work/);
    assert.equal(s.contextKeys["farmhand.toggleAction"], "stop");
    assert.match(plain(s.statusBar.tooltip), /Click to stop donating/);

    const jobId = await submitPrimes(N_LONG);
    s = await reach("working");
    assert.match(s.statusBar.text, /Farmhand: 1 job$/);
    assert.match(machineRow(s), /working \(1 job\)/);
    assert.ok(s.tree.rows.some((r) => r.trim().startsWith("demo.primes")), `no running job row in ${JSON.stringify(s.tree.rows)}`);
    assert.deepEqual(s.panel?.actions, { snooze: true, finish: true });

    const finishing = vscode.commands.executeCommand("farmhand.finishAndStop");
    s = await reach("draining");
    assert.match(s.statusBar.text, /Farmhand: finishing 1 job$/);
    assert.match(plain(s.statusBar.tooltip), /finishing 1 job, then off/);
    assert.match(plain(s.statusBar.tooltip), /Click to stop now: the running jobs go back to the queue/);
    assert.match(machineRow(s), /finishing 1 job, then off/);
    assert.equal(s.panel?.toggle, "stopNow");
    assert.deepEqual(s.panel?.actions, { snooze: false, finish: false });
    assert.equal(s.contextKeys["farmhand.toggleAction"], "stopNow");

    await finishing;
    s = await reach("off");
    assert.match(s.statusBar.text, /Farmhand: off$/);
    const done = (await new ConvexHttpClient(testFarm().url).query(anyApi.jobs.get, { clientKey: testFarm().clientKey, jobId })) as { status: string };
    assert.equal(done.status, "succeeded", "finishing let the job run to the end");
  });

  it("paused: an unreadable time window pauses with its reason everywhere; its fix opens the settings on the tab where they live", async () => {
    await vscode.commands.executeCommand("farmhand.startDonating");
    await reach("waiting");
    await setFarmhandSetting("timeWindows", ["weekdays 9-5"]);
    const s = await reach("paused");
    assert.match(s.statusBar.text, /Farmhand: paused$/);
    assert.match(plain(s.statusBar.tooltip), /paused: time window not understood: "weekdays 9-5"/);
    assert.match(s.statusBar.tooltip, /\[Edit Time Windows\]\(command:farmhand\.fixPause\)/);
    assert.match(machineRow(s), /paused: time window not understood/);
    assert.deepEqual(s.panel?.actions.fix, { setting: "farmhand.timeWindows", label: "Edit Time Windows", how: "open", tab: expectsRemoteWindow() ? "remote" : "user" });

    await vscode.commands.executeCommand("farmhand.fixPause");
    await waitUntil("the settings editor", () => vscode.window.tabGroups.activeTabGroup.activeTab?.label ?? "", (label) => /Settings/.test(label), 10_000);
    await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
    await setFarmhandSetting("timeWindows", undefined);
    await reach("waiting");
    await vscode.commands.executeCommand("farmhand.stopDonating");
    await reach("off");
  });

  it("offline: the status bar gives the reason, the tree marks the figures as last known with their age", async () => {
    await vscode.commands.executeCommand("farmhand.startDonating");
    await reach("waiting");
    await waitUntil("live figures", () => api.getState().farm.freshness.kind, (k) => k === "live", 10_000);
    await proxy.cut();
    const s = await reach("offline");
    assert.match(s.statusBar.text, /Farmhand: offline$/);
    assert.match(plain(s.statusBar.tooltip), /offline: the connection to the farm was lost \(since \d{1,2}:\d{2}/);
    assert.match(machineRow(s), /offline: the connection to the farm was lost/);
    const shown = await waitUntil("the tree's last-known notice", () => api.surfaces().tree, (t) => /^Last known as of \d{1,2}:\d{2} \([\d.]+ (?:ms|s|min) ago\): cannot reach the farm/.test(t.message ?? ""), 10_000);
    assert.ok(shown.rows.some((r) => /^Queue — .*\(last known\)$/.test(r)), `the Queue row is not marked last known: ${JSON.stringify(shown.rows)}`);
    assert.equal(s.panel?.farm.freshness.kind, "lastKnown");
    // The age moves on while the view is visible.
    const first = shown.message;
    await waitUntil("the age ticking", () => api.surfaces().tree.message, (m) => m !== first, 5_000);

    await proxy.open();
    await reach("waiting");
    await waitUntil("live figures again", () => api.getState().farm.freshness.kind, (k) => k === "live", STEP_TIMEOUT);
    assert.equal(api.surfaces().tree.message, undefined);
  });

  it("revoked: the Farm view says the key was refused (not 'Cannot reach the farm'), no Stop or Snooze, a rejoin", async () => {
    // its own starting point (it also runs alone, with FARMHAND_HOST_GREP): donating, connected, waiting for work
    await vscode.commands.executeCommand("farmhand.startDonating");
    await reach("waiting");
    await farm().mutation(anyApi.workers.leave, { apiKey }); // the farm revokes this machine's key
    const s = await reach("revoked");
    assert.match(s.statusBar.text, /Farmhand: key refused$/);
    assert.match(plain(s.statusBar.tooltip), /Click to join again/);
    assert.equal(s.statusBar.command, "farmhand.toggle");
    const tree = await waitUntil("the tree's refusal", () => api.surfaces().tree, (t) => t.message !== undefined, 5_000);
    assert.match(tree.message ?? "", /^The farm refused this machine's key \(revoked\): .+ Join again with a new token from your operator\.$/);
    assert.doesNotMatch(tree.message ?? "", /Cannot reach|CONVEX|Uncaught/);
    assert.deepEqual(tree.rows, [], "the tree still shows the farm's figures beside a refused key");
    assert.equal(s.panel?.toggle, "rejoin");
    assert.deepEqual(s.panel?.actions, { snooze: false, finish: false });
    assert.equal(s.contextKeys["farmhand.keyRefused"], true);
    assert.equal(s.contextKeys["farmhand.toggleAction"], "rejoin");

    // switched off afterwards, the refusal still shows, with its rejoin (not "off" and Start)
    await vscode.commands.executeCommand("farmhand.stopDonating");
    await waitUntil("donating not wanted", () => api.getState().wanted, (wanted) => !wanted, 5_000);
    const off = await reach("revoked");
    assert.match(off.statusBar.text, /Farmhand: key refused$/);
    assert.equal(off.panel?.toggle, "rejoin");
    assert.equal(off.contextKeys["farmhand.toggleAction"], "rejoin");
  });
});
