import * as vscode from "vscode";
import { Membership } from "./membership";
import { DonationSwitch } from "./policy/donationSwitch";
import { FarmTree } from "./views/farmTree";
import { joinFarm } from "./views/joinFlow";
import { PanelProvider } from "./views/panelProvider";
import type { PanelSnapshot } from "./views/panelProtocol";
import { StatusBar } from "./views/statusBar";

/** What other extensions (and our tests) get from `extensions.getExtension("farmhand.farmhand").exports`. */
export type FarmhandApi = { getState(): PanelSnapshot };

const ADVERTISED_CAPABILITIES = ["demo.echo", "demo.primes"];

export async function activate(context: vscode.ExtensionContext): Promise<FarmhandApi> {
  const log = vscode.window.createOutputChannel("Farmhand", { log: true });
  const membership = new Membership(context.secrets);
  await membership.load();
  const donation = new DonationSwitch();
  const statusBar = new StatusBar();
  const tree = new FarmTree(() => membership.joined, () => membership.url);

  const snapshot = (): PanelSnapshot => {
    const state = donation.state;
    return {
      donating: donation.donating,
      state: state.kind,
      pausedReason: state.kind === "paused" ? state.reason : undefined,
      joined: membership.joined,
    };
  };
  const panel = new PanelProvider(context.extensionUri, {
    version: context.extension.packageJSON.version,
    snapshot,
    toggle: () => donation.toggle(),
    log,
  });

  const readRemoteFact = () =>
    donation.updateFacts({
      remoteNotAllowed:
        vscode.env.remoteName !== undefined &&
        !vscode.workspace.getConfiguration("farmhand").get<boolean>("allowRemoteDonation", false),
    });
  const render = () => {
    statusBar.render(donation.state);
    void vscode.commands.executeCommand("setContext", "farmhand.donating", donation.donating);
    void vscode.commands.executeCommand("setContext", "farmhand.joined", membership.joined);
    panel.refresh();
  };

  context.subscriptions.push(
    log,
    membership,
    statusBar,
    tree,
    panel,
    donation.onDidChange((state) => {
      log.info(`Donation ${state.kind}${state.kind === "paused" ? ` (${state.reason})` : ""}`);
      render();
    }),
    membership.onDidChange(() => {
      tree.refresh();
      render();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("farmhand.allowRemoteDonation")) readRemoteFact();
    }),
    vscode.window.registerTreeDataProvider(FarmTree.viewId, tree),
    vscode.window.registerWebviewViewProvider(PanelProvider.viewId, panel),
    vscode.commands.registerCommand("farmhand.toggle", () => donation.toggle()),
    vscode.commands.registerCommand("farmhand.join", () => joinFarm(membership, ADVERTISED_CAPABILITIES, log)),
    vscode.commands.registerCommand("farmhand.showLog", () => log.show()),
  );

  readRemoteFact();
  render();
  return { getState: snapshot };
}

export function deactivate(): void {}
