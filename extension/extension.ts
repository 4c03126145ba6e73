import * as vscode from "vscode";
import { cpus } from "node:os";
import { makeFunctionReference } from "convex/server";
import { Donor } from "./donor";
import { createEngineHandlers } from "./engineHandlers";
import { FarmConnection } from "./farmConnection";
import { FarmData } from "./farmData";
import { FarmSession } from "./farmSession";
import { Membership } from "./membership";
import type { Handler } from "./worker";
import { FarmTree } from "./views/farmTree";
import { joinFarm, type JoinArgs } from "./views/joinFlow";
import { PanelProvider } from "./views/panelProvider";
import type { PanelRequest, PanelSnapshot } from "./views/panelProtocol";
import { buildSnapshot } from "./views/panelSnapshot";
import { StatusBar } from "./views/statusBar";

/** What other extensions (and our tests) get from `extensions.getExtension("farmhand.farmhand").exports`. */
export type FarmhandApi = {
  getState(): PanelSnapshot;
  /** How long activate() took, in ms (the benchmark reads it in a real extension host). */
  activationMs: number;
  /** Offer another job type on this machine; returns a disposable that removes it. */
  registerHandler(handler: Handler): vscode.Disposable;
};

const SNOOZE_MS = 60 * 60_000;
const manage = (name: string) => makeFunctionReference<"mutation", { apiKey: string; jobId: string }, unknown>(`farm:${name}`);

export async function activate(context: vscode.ExtensionContext): Promise<FarmhandApi> {
  const started = performance.now();
  const log = vscode.window.createOutputChannel("Farmhand", { log: true });
  const membership = new Membership(context.secrets);
  await membership.load();
  const connection = new FarmConnection(membership);
  const data = new FarmData(connection);
  const donor = new Donor(context.globalState);
  const { registry, pool } = createEngineHandlers(log);
  const session = new FarmSession(connection, registry, log, () => render());
  // Our own jobs keep cores busy too; they must not count as "other programs" or donating would pause itself.
  donor.ownCpuShare = () => (session.snapshot()?.running.length ?? 0) / Math.max(1, cpus().length);
  const statusBar = new StatusBar();
  const tree = new FarmTree(data, () => membership.joined, () => session.snapshot()?.running ?? [], () => snapshot().statusText);

  const snapshot = (): PanelSnapshot =>
    buildSnapshot({
      joined: membership.joined, wanted: donor.wanted, farmUrl: membership.url, decision: donor.decision,
      policy: donor.policySummary(), engine: session.snapshot(), engineView: session.view(), busyMs: session.busyMs,
      overview: data.overview, dead: data.dead, farmError: data.error, now: Date.now(),
    });
  const applyPolicy = () => {
    const target = membership.joined && membership.apiKey ? { url: membership.url, apiKey: membership.apiKey, concurrency: donor.current.concurrency } : undefined;
    void session.apply(target, donor.decision).finally(render);
  };
  const join = async (args?: JoinArgs) => joinFarm(membership, await registry.capabilities(), log, args);
  let provisioning: Promise<void> | undefined;
  const toggle = async () => {
    await provisioning; // a provisioned join in flight decides whether this click toggles or asks to join
    if (!membership.joined) return join();
    if (session.resumeAfterAutoPause()) return;
    return donor.setWanted(!donor.wanted);
  };
  const snooze = async () => {
    await donor.snooze(SNOOZE_MS);
    void vscode.window.showInformationMessage("Farmhand: snoozed for an hour. Running jobs finish; no new ones start.");
  };
  const finishAndStop = async () => {
    await session.drain();
    await donor.setWanted(false);
    void vscode.window.showInformationMessage("Farmhand: current jobs finished; donating is off.");
  };
  const leave = async () => {
    const sure = await vscode.window.showWarningMessage("Leave the farm? Running jobs go back to the queue and the key is forgotten.", { modal: true }, "Leave Farm");
    if (sure !== "Leave Farm") return;
    await session.stop("left the farm");
    await membership.leave();
    log.info("Left the farm");
  };
  const onJob = (action: "retryDead" | "purgeDead" | "cancelJob", done: string) => async (arg: string | { jobId?: string; job?: { jobId: string }; dead?: { jobId: string } }) => {
    const jobId = typeof arg === "string" ? arg : (arg?.jobId ?? arg?.dead?.jobId ?? arg?.job?.jobId);
    if (!jobId) return;
    try {
      await connection.run(manage(action), { jobId });
      void vscode.window.showInformationMessage(`Farmhand: ${done}.`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log.error(`${action} ${jobId} failed: ${message}`);
      void vscode.window.showErrorMessage(`Farmhand: ${message}`, "Show Log").then((c) => c && log.show());
    }
  };
  const retryDead = onJob("retryDead", "the job is queued again");
  const purgeDead = onJob("purgeDead", "the dead letter is deleted");
  const cancelJob = onJob("cancelJob", "the job is canceled");
  const giveBack = (node: { job?: { jobId: string } }) => node?.job && session.giveBack(node.job.jobId);
  const perform = (r: Exclude<PanelRequest, { type: "ready" }>): unknown => {
    switch (r.type) {
      case "toggle": return toggle();
      case "join": return join();
      case "snooze": return snooze();
      case "finishAndStop": return finishAndStop();
      case "retryDead": return retryDead(r.jobId);
      case "purgeDead": return purgeDead(r.jobId);
      case "cancelJob": return cancelJob(r.jobId);
    }
  };
  const panel = new PanelProvider(context.extensionUri, data, { version: context.extension.packageJSON.version, snapshot, perform: (r) => void perform(r), log });
  const render = () => {
    const state = snapshot();
    statusBar.render({ status: state.status, farmUrl: state.farmUrl, jobs: state.jobs, policy: donor.describePolicy() });
    void vscode.commands.executeCommand("setContext", "farmhand.joined", state.joined);
    void vscode.commands.executeCommand("setContext", "farmhand.donating", state.donating);
    tree.refreshMachine();
    panel.refresh();
  };

  context.subscriptions.push(
    log, membership, connection, data, donor, session, statusBar, tree, panel, { dispose: () => pool.close() },
    donor.onDidChange(applyPolicy),
    data.onDidChange(() => panel.refresh()),
    membership.onDidChange(() => (data.reset(), tree.refresh(), applyPolicy())),
    { dispose: registry.onChange(() => void session.stop("handlers changed").then(applyPolicy)) },
    vscode.window.registerWebviewViewProvider(PanelProvider.viewId, panel),
    vscode.commands.registerCommand("farmhand.toggle", toggle),
    vscode.commands.registerCommand("farmhand.join", join),
    vscode.commands.registerCommand("farmhand.leave", leave),
    vscode.commands.registerCommand("farmhand.snooze", snooze),
    vscode.commands.registerCommand("farmhand.finishAndStop", finishAndStop),
    vscode.commands.registerCommand("farmhand.giveBackJob", giveBack),
    vscode.commands.registerCommand("farmhand.retryDead", retryDead),
    vscode.commands.registerCommand("farmhand.purgeDead", purgeDead),
    vscode.commands.registerCommand("farmhand.cancelJob", cancelJob),
    vscode.commands.registerCommand("farmhand.showLog", () => log.show()),
  );

  donor.evaluate();
  applyPolicy();
  provisioning = joinFromEnvironment(membership, join, log);
  return { getState: snapshot, activationMs: performance.now() - started, registerHandler: (handler) => new vscode.Disposable(registry.register(handler)) };
}

/** Provisioning (fleets, demos): join once from FARMHAND_JOIN_URL + FARMHAND_JOIN_TOKEN when not joined yet. */
async function joinFromEnvironment(membership: Membership, join: (args: JoinArgs) => Promise<boolean>, log: vscode.LogOutputChannel) {
  const url = process.env.FARMHAND_JOIN_URL;
  const token = process.env.FARMHAND_JOIN_TOKEN;
  if (membership.joined || !url || !token) return;
  await join({ url, token }).catch((error) => log.error(`Provisioned join failed: ${error instanceof Error ? error.message : error}`));
}

export function deactivate(): void {}
