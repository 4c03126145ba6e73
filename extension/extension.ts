import * as vscode from "vscode";
import { Donor } from "./donor";
import { createEngineHandlers } from "./engineHandlers";
import { FarmSession } from "./farmSession";
import type { Handler } from "./worker";
import { Membership } from "./membership";
import { describeStatus, donorStatus } from "./views/donorStatus";
import { FarmTree } from "./views/farmTree";
import { joinFarm, type JoinArgs } from "./views/joinFlow";
import { PanelProvider } from "./views/panelProvider";
import type { PanelRequest, PanelSnapshot } from "./views/panelProtocol";
import { StatusBar } from "./views/statusBar";

/** What other extensions (and our tests) get from `extensions.getExtension("farmhand.farmhand").exports`. */
export type FarmhandApi = {
  getState(): PanelSnapshot;
  /** Offer another job type on this machine; returns a disposable that removes it. */
  registerHandler(handler: Handler): vscode.Disposable;
};

const SNOOZE_MS = 60 * 60_000;

export async function activate(context: vscode.ExtensionContext): Promise<FarmhandApi> {
  const log = vscode.window.createOutputChannel("Farmhand", { log: true });
  const membership = new Membership(context.secrets);
  await membership.load();
  const donor = new Donor(context.globalState);
  const { registry, pool } = createEngineHandlers(log);
  const statusBar = new StatusBar();
  const tree = new FarmTree(() => membership.joined, () => membership.url);
  const session = new FarmSession(registry, log, () => render());

  const snapshot = (): PanelSnapshot => {
    const engine = session.snapshot();
    const status = donorStatus({ joined: membership.joined, decision: donor.decision, engine: session.view() });
    const s = donor.current;
    return {
      joined: membership.joined,
      wanted: donor.wanted,
      donating: donor.decision.donate,
      status,
      statusText: describeStatus(status),
      farmUrl: membership.url,
      policy: { preset: s.preset, concurrency: s.concurrency, idleMinutes: s.idleMinutes, otherCpuPercent: Math.round(s.otherCpuThreshold * 100), problems: s.windowErrors },
      jobs: (engine?.running ?? []).map((j) => ({ jobId: j.jobId, type: j.type, progress: j.progress, status: j.status, startedAt: j.startedAt })),
      totals: engine?.totals ?? { succeeded: 0, failed: 0, canceled: 0 },
    };
  };
  const applyPolicy = () => {
    const key = membership.apiKey;
    const target = membership.joined && key ? { url: membership.url, apiKey: key, concurrency: donor.current.concurrency } : undefined;
    void session.apply(target, donor.decision).finally(render);
  };
  const join = async (args?: JoinArgs) => joinFarm(membership, await registry.capabilities(), log, args);
  const toggle = () => (membership.joined ? donor.setWanted(!donor.wanted) : join());
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
    const sure = await vscode.window.showWarningMessage("Leave the farm? Running jobs are given back to the queue and the key is forgotten.", { modal: true }, "Leave Farm");
    if (sure !== "Leave Farm") return;
    await session.stop("left the farm");
    await membership.leave();
    log.info("Left the farm");
  };
  const perform = (request: Exclude<PanelRequest, { type: "ready" }>) =>
    ({ toggle, join: () => join(), snooze, finishAndStop })[request.type]();
  const panel = new PanelProvider(context.extensionUri, { version: context.extension.packageJSON.version, snapshot, perform: (r) => void perform(r), log });
  const render = () => {
    const state = snapshot();
    statusBar.render({ status: state.status, farmUrl: state.farmUrl, jobs: state.jobs, policy: describePolicy(state) });
    void vscode.commands.executeCommand("setContext", "farmhand.joined", state.joined);
    void vscode.commands.executeCommand("setContext", "farmhand.donating", state.donating);
    panel.refresh();
  };

  context.subscriptions.push(
    log, membership, donor, statusBar, tree, panel, session, { dispose: () => pool.close() },
    donor.onDidChange(applyPolicy),
    membership.onDidChange(() => (tree.refresh(), applyPolicy())),
    { dispose: registry.onChange(() => void session.stop("handlers changed").then(applyPolicy)) },
    vscode.window.registerTreeDataProvider(FarmTree.viewId, tree),
    vscode.window.registerWebviewViewProvider(PanelProvider.viewId, panel),
    vscode.commands.registerCommand("farmhand.toggle", toggle),
    vscode.commands.registerCommand("farmhand.join", join),
    vscode.commands.registerCommand("farmhand.leave", leave),
    vscode.commands.registerCommand("farmhand.snooze", snooze),
    vscode.commands.registerCommand("farmhand.finishAndStop", finishAndStop),
    vscode.commands.registerCommand("farmhand.showLog", () => log.show()),
  );

  await joinFromEnvironment(membership, join, log);
  donor.evaluate();
  applyPolicy();
  return { getState: snapshot, registerHandler: (handler) => new vscode.Disposable(registry.register(handler)) };
}

/** Provisioning (fleets, demos): join once from FARMHAND_JOIN_URL + FARMHAND_JOIN_TOKEN when not joined yet. */
async function joinFromEnvironment(membership: Membership, join: (args: JoinArgs) => Promise<boolean>, log: vscode.LogOutputChannel) {
  const url = process.env.FARMHAND_JOIN_URL;
  const token = process.env.FARMHAND_JOIN_TOKEN;
  if (membership.joined || !url || !token) return;
  await join({ url, token }).catch((error) => log.error(`Provisioned join failed: ${error instanceof Error ? error.message : error}`));
}

function describePolicy(state: PanelSnapshot): string {
  const p = state.policy;
  return `${p.preset}, up to ${p.concurrency} job(s), after ${p.idleMinutes} idle min`;
}

export function deactivate(): void {}
