import * as vscode from "vscode";
import { cpus } from "node:os";
import { runAppsAllowed } from "./donor/appsConsent";
import { createCommands } from "./donor/commands";
import { Donor } from "./donor/donor";
import { EngineHandlers } from "./donor/engineHandlers";
import { FarmConnection } from "./donor/farmConnection";
import { FarmData } from "./donor/farmData";
import { FarmSession } from "./donor/farmSession";
import { Membership } from "./donor/membership";
import type { DonorFacts } from "./donorState/deriveDonorState";
import type { DonorState } from "./donorState/donorState";
import { joinedMessage } from "./donorState/donorStateText";
import type { Handler } from "./worker";
import { messageOf } from "./worker/errors";
import { ContextKeys } from "./views/contextKeys";
import { DonorStore } from "./views/donorStore";
import { FarmTree } from "./views/farmTree";
import { joinFarm } from "./views/joinFlow";
import { PanelProvider } from "./views/panelProvider";
import { ConsolePanel } from "./views/consolePanel";
import { ConsoleConnection } from "./donor/consoleConnection";
import { ConsoleSession } from "./donor/consoleSession";
import { OperatorKeyStore } from "./donor/operatorKey";
import { StatusBar } from "./views/statusBar";

/** What other extensions (and our tests) get from `extensions.getExtension("farmhand.farmhand").exports`. */
export type FarmhandApi = {
  /** The donor state every surface shows, derived afresh. */
  getState(): DonorState;
  /** How long activate() took, in ms (the benchmark reads it in a real extension host). */
  activationMs: number;
  /** What each surface shows now, as text (the host tests check that they agree). */
  surfaces(): {
    statusBar: ReturnType<StatusBar["shown"]>;
    tree: ReturnType<FarmTree["shown"]>;
    panel: DonorState | undefined;
    contextKeys: Record<string, unknown>;
  };
  /** Offer another job type on this machine; returns a disposable that removes it. */
  registerHandler(handler: Handler): vscode.Disposable;
};

export async function activate(context: vscode.ExtensionContext): Promise<FarmhandApi> {
  const started = performance.now();
  const log = vscode.window.createOutputChannel("Farmhand", { log: true });
  const membership = new Membership(context.secrets);
  // The worker key comes from SecretStorage, a round trip to the workbench (busy starting up): ask at once, and build
  // what follows while the answer travels (the request leaves on the host's next timer tick: yield one first).
  const keyLoaded = membership.load();
  await new Promise((resolve) => setTimeout(resolve));
  const connection = new FarmConnection(membership);
  const data = new FarmData(connection);
  const donor = new Donor(context.globalState, log);
  const handlers = new EngineHandlers(log, membership);
  const session = new FarmSession(connection, handlers.registry, log, () => store.request(), donor.allowance);
  // An app module downloaded on a metered connection counts toward farmhand.meteredLimitMB like a payload.
  handlers.onModuleDownloaded = (bytes) => donor.allowance.spend(bytes);
  // Where the OS reports no nice time (Windows), estimate our own jobs' CPU share so it is not "other programs".
  donor.ownCpuShare = () => (session.snapshot()?.running.length ?? 0) / Math.max(1, cpus().length);

  const facts = (): DonorFacts => ({
    now: Date.now(),
    joined: membership.joined,
    farmUrl: membership.url,
    wanted: donor.wanted,
    decision: donor.decision,
    remoteWindow: vscode.env.remoteName !== undefined,
    engine: session.engineFacts(),
    stopped: session.stoppedFacts(),
    policy: donor.policySummary(),
    contribution: { ...session.contribution },
    runsApps: runAppsAllowed(),
    ...(donor.gpuProgram === undefined ? {} : { gpuProgram: donor.gpuProgram }),
    ...(session.energyMethod() ? { energy: session.energyMethod() } : {}),
    farm: data.facts(),
  });
  // The one store: every source asks it to derive again; every surface renders what it tells them.
  const store = new DonorStore(facts);
  const join = (args?: { url: string; token: string }) => joinFarm({ membership, handlers, log, joinedMessage: () => joinedMessage(store.refresh()) }, args);
  const { perform, joinFromEnvironment, register } = createCommands({ membership, donor, session, connection, join, log, state: () => store.refresh() });

  const statusBar = new StatusBar();
  const tree = new FarmTree(data, store.state);
  const panel = new PanelProvider(context.extensionUri, data, { version: String((context.extension.packageJSON as { version?: unknown }).version), snapshot: () => store.state, perform: (r) => void perform(r), log });
  const contextKeys = new ContextKeys();
  // The console's key (an operator key, else a managing worker key) never reaches the engine: a connection of its own.
  // Only the console needs it: it is read in the background, and the console's commands wait for it.
  const operatorKeys = new OperatorKeyStore(context.secrets);
  const operatorKeyRead = operatorKeys.loadAndProvision().catch((error) => log.error(`The operator key could not be read: ${messageOf(error)}`));
  const consoleConnection = new ConsoleConnection(membership, operatorKeys);
  const consolePanel = new ConsolePanel(context.extensionUri, new ConsoleSession(consoleConnection), operatorKeys, membership, log);
  const render = (state: DonorState) => {
    statusBar.render(state);
    contextKeys.set({
      "farmhand.joined": state.joined,
      "farmhand.donating": state.donating,
      "farmhand.toggleAction": state.toggle,
      "farmhand.state": state.status.kind,
      "farmhand.keyRefused": state.status.kind === "revoked",
      "farmhand.unreachable": state.farm.freshness.kind === "missing" && state.farm.freshness.why.kind === "unreachable",
    });
    tree.show(state);
    panel.show(state);
  };
  await keyLoaded;
  render(store.refresh());
  const applyPolicy = () => {
    const key = membership.apiKey;
    const { concurrency, suspendOnReturn, suspendLimitMs, wattsPerCore } = donor.current;
    const machine = { gpuHeldBy: donor.gpuProgram, meteredLimit: donor.meteredLimit, wattsPerCore };
    const target = membership.joined && key ? { url: membership.url, apiKey: key, concurrency, suspendOnReturn, suspendLimitMs, ...machine } : undefined;
    void session.apply(target, donor.decision).finally(() => store.request());
  };

  context.subscriptions.push(
    log, membership, connection, data, donor, session, handlers, store, statusBar, tree, panel,
    store.onDidChange(render),
    donor.onDidChange(() => (store.request(), applyPolicy())),
    data.onDidChange(() => store.request()),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration("farmhand.runApps") && store.request()),
    membership.onDidChange(() => (data.reset(), store.request(), applyPolicy())),
    { dispose: handlers.registry.onChange(() => void session.refreshCapabilities()) },
    vscode.window.registerWebviewViewProvider(PanelProvider.viewId, panel),
    operatorKeys,
    consoleConnection,
    consolePanel,
    vscode.commands.registerCommand("farmhand.openConsole", () => operatorKeyRead.then(() => consolePanel.open())),
    vscode.commands.registerCommand("farmhand.enterOperatorKey", () => operatorKeyRead.then(() => consolePanel.enterOperatorKey())),
    vscode.commands.registerCommand("farmhand.forgetOperatorKey", () => operatorKeyRead.then(() => consolePanel.forgetOperatorKey())),
    ...register(),
  );

  stopOnDeactivate = () => session.stop({ kind: "user", detail: "window closing" });
  donor.evaluate();
  applyPolicy();
  joinFromEnvironment();
  return {
    getState: () => store.refresh(),
    surfaces: () => ({ statusBar: statusBar.shown(), tree: tree.shown(), panel: panel.posted(), contextKeys: contextKeys.values() }),
    activationMs: performance.now() - started,
    registerHandler: (handler) => new vscode.Disposable(handlers.registry.register(handler)),
  };
}

/** Set by activate: give running jobs back to the queue before the connection closes. */
let stopOnDeactivate: (() => Promise<void>) | undefined;

export function deactivate(): Promise<void> | undefined {
  return stopOnDeactivate?.();
}
