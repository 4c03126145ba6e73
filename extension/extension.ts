import * as vscode from "vscode";
import { cpus } from "node:os";
import { createCommands } from "./commands";
import { Donor } from "./donor";
import { createEngineHandlers } from "./engineHandlers";
import { FarmConnection } from "./farmConnection";
import { FarmData } from "./farmData";
import { FarmSession } from "./farmSession";
import { Membership } from "./membership";
import type { Handler } from "./worker";
import { FarmTree } from "./views/farmTree";
import { PanelProvider } from "./views/panelProvider";
import type { PanelSnapshot } from "./views/panelProtocol";
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
  // Where the OS reports no nice time (Windows), estimate our own jobs' CPU share so it is not "other programs".
  donor.ownCpuShare = () => (session.snapshot()?.running.length ?? 0) / Math.max(1, cpus().length);
  const { perform, joinFromEnvironment, register } = createCommands({ membership, donor, session, connection, registry, log });

  const snapshot = (): PanelSnapshot =>
    buildSnapshot({
      joined: membership.joined, wanted: donor.wanted, farmUrl: membership.url, decision: donor.decision,
      policy: donor.policySummary(), engine: session.snapshot(), engineView: session.view(), contribution: { ...session.contribution },
      overview: data.overview, dead: data.dead, farmError: data.error, now: Date.now(),
    });
  const statusBar = new StatusBar();
  const tree = new FarmTree(data, () => membership.joined, () => session.snapshot()?.running ?? [], () => snapshot().statusText);
  const panel = new PanelProvider(context.extensionUri, data, { version: context.extension.packageJSON.version, snapshot, perform: (r) => void perform(r), log });
  const contextKeys = new ContextKeys();
  const render = () => {
    const state = snapshot();
    statusBar.render({ status: state.status, farmUrl: state.farmUrl, jobs: state.jobs, policy: donor.describePolicy() });
    contextKeys.set({ "farmhand.joined": state.joined, "farmhand.donating": state.donating });
    tree.refreshMachine();
    panel.refresh();
  };
  const applyPolicy = () => {
    const key = membership.apiKey;
    const target = membership.joined && key ? { url: membership.url, apiKey: key, concurrency: donor.current.concurrency } : undefined;
    void session.apply(target, donor.decision).finally(render);
  };

  context.subscriptions.push(
    log, membership, connection, data, donor, session, statusBar, tree, panel, { dispose: () => pool.close() },
    donor.onDidChange(applyPolicy),
    data.onDidChange(() => panel.refresh()),
    membership.onDidChange(() => (data.reset(), tree.refresh(), applyPolicy())),
    { dispose: registry.onChange(() => void session.refreshCapabilities()) },
    vscode.window.registerWebviewViewProvider(PanelProvider.viewId, panel),
    ...register(),
  );

  stopOnDeactivate = () => session.stop("window closing");
  donor.evaluate();
  applyPolicy();
  joinFromEnvironment();
  return { getState: snapshot, activationMs: performance.now() - started, registerHandler: (handler) => new vscode.Disposable(registry.register(handler)) };
}

/** `setContext` crosses to the UI process: send a key only when its value changes (render runs on every progress). */
class ContextKeys {
  private readonly values = new Map<string, unknown>();
  set(keys: Record<string, unknown>): void {
    for (const [key, value] of Object.entries(keys)) {
      if (this.values.get(key) === value) continue;
      this.values.set(key, value);
      void vscode.commands.executeCommand("setContext", key, value);
    }
  }
}

/** Set by activate: give running jobs back to the queue before the connection closes. */
let stopOnDeactivate: (() => Promise<void>) | undefined;

export function deactivate(): Promise<void> | undefined {
  return stopOnDeactivate?.();
}
