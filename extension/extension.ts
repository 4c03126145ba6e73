import * as vscode from "vscode";
import { cpus } from "node:os";
import { createCommands } from "./donor/commands";
import { Donor } from "./donor/donor";
import { EngineHandlers } from "./donor/engineHandlers";
import { FarmConnection } from "./donor/farmConnection";
import { FarmData } from "./donor/farmData";
import { FarmSession } from "./donor/farmSession";
import { Membership } from "./donor/membership";
import type { PanelSnapshot } from "./hostAndWebview/panelProtocol";
import type { Handler } from "./worker";
import { ContextKeys } from "./views/contextKeys";
import { FarmTree } from "./views/farmTree";
import { joinFarm } from "./views/joinFlow";
import { PanelProvider } from "./views/panelProvider";
import { ConsolePanel } from "./views/consolePanel";
import { buildSnapshot } from "./views/panelSnapshot";
import { StatusBar } from "./views/statusBar";
import { Throttle } from "./views/throttle";

/** What other extensions (and our tests) get from `extensions.getExtension("farmhand.farmhand").exports`. */
export type FarmhandApi = {
  getState(): PanelSnapshot;
  /** How long activate() took, in ms (the benchmark reads it in a real extension host). */
  activationMs: number;
  /** Offer another job type on this machine; returns a disposable that removes it. */
  registerHandler(handler: Handler): vscode.Disposable;
};

/** Progress arrives up to 10 times a second per job: the views redraw at most once per this window. */
const RENDER_EVERY_MS = 100;

export async function activate(context: vscode.ExtensionContext): Promise<FarmhandApi> {
  const started = performance.now();
  const log = vscode.window.createOutputChannel("Farmhand", { log: true });
  const membership = new Membership(context.secrets);
  await membership.load();
  const connection = new FarmConnection(membership);
  const data = new FarmData(connection);
  const donor = new Donor(context.globalState, log);
  const handlers = new EngineHandlers(log, membership);
  const session = new FarmSession(connection, handlers.registry, log, () => render.request());
  // Where the OS reports no nice time (Windows), estimate our own jobs' CPU share so it is not "other programs".
  donor.ownCpuShare = () => (session.snapshot()?.running.length ?? 0) / Math.max(1, cpus().length);
  const join = (args?: { url: string; token: string }) => joinFarm({ membership, handlers, log }, args);
  const { perform, joinFromEnvironment, register } = createCommands({ membership, donor, session, connection, join, log });

  const snapshot = (): PanelSnapshot =>
    buildSnapshot({
      joined: membership.joined, wanted: donor.wanted, farmUrl: membership.url, decision: donor.decision,
      policy: donor.policySummary(), engine: session.snapshot(), engineView: session.view(), contribution: { ...session.contribution },
      overview: data.overview, dead: data.dead, farmError: data.error, now: Date.now(),
    });
  const statusBar = new StatusBar();
  const tree = new FarmTree(data, () => membership.joined);
  const panel = new PanelProvider(context.extensionUri, data, { version: String((context.extension.packageJSON as { version?: unknown }).version), snapshot, perform: (r) => void perform(r), log });
  const contextKeys = new ContextKeys();
  const consolePanel = new ConsolePanel(context.extensionUri, connection, log);
  // One snapshot per redraw, handed to every surface.
  const render = new Throttle(() => {
    const state = snapshot();
    statusBar.render({ ...state, policy: donor.describePolicy() });
    contextKeys.set({ "farmhand.joined": state.joined, "farmhand.donating": state.donating });
    tree.showMachine(state);
    panel.show(state);
  }, RENDER_EVERY_MS);
  const applyPolicy = () => {
    const key = membership.apiKey;
    const { concurrency, suspendOnReturn, suspendLimitMs } = donor.current;
    const target = membership.joined && key ? { url: membership.url, apiKey: key, concurrency, suspendOnReturn, suspendLimitMs } : undefined;
    void session.apply(target, donor.decision).finally(() => render.request());
  };

  context.subscriptions.push(
    log, membership, connection, data, donor, session, handlers, statusBar, tree, panel, render,
    donor.onDidChange(applyPolicy),
    data.onDidChange(() => render.request()),
    membership.onDidChange(() => (data.reset(), tree.refresh(), applyPolicy())),
    { dispose: handlers.registry.onChange(() => void session.refreshCapabilities()) },
    vscode.window.registerWebviewViewProvider(PanelProvider.viewId, panel),
    consolePanel,
    vscode.commands.registerCommand("farmhand.openConsole", () => consolePanel.open()),
    ...register(),
  );

  stopOnDeactivate = () => session.stop("window closing");
  donor.evaluate();
  applyPolicy();
  joinFromEnvironment();
  return { getState: snapshot, activationMs: performance.now() - started, registerHandler: (handler) => new vscode.Disposable(handlers.registry.register(handler)) };
}

/** Set by activate: give running jobs back to the queue before the connection closes. */
let stopOnDeactivate: (() => Promise<void>) | undefined;

export function deactivate(): Promise<void> | undefined {
  return stopOnDeactivate?.();
}
