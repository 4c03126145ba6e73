import * as vscode from "vscode";
import type { FarmData } from "../donor/farmData";
import { DisposableOwner } from "../lifecycle";
import { parsePanelRequest, type PanelMessage, type PanelRequest, type PanelSnapshot } from "../protocol/panelProtocol";
import { webviewPage } from "./webviewPage";

export type PanelHost = {
  version: string;
  snapshot(): PanelSnapshot;
  perform(request: Exclude<PanelRequest, { type: "ready" }>): void;
  log: vscode.LogOutputChannel;
};

/** The control panel: one webview view with a strict CSP; every inbound message is validated. */
export class PanelProvider extends DisposableOwner implements vscode.WebviewViewProvider {
  static readonly viewId = "farmhand.panel";
  private view?: vscode.WebviewView;
  /** What belongs to the current view; VS Code may resolve the view again (it was moved or closed and reopened). */
  private viewDisposables: vscode.Disposable[] = [];
  /** A snapshot came while the panel was hidden: send the current one once it shows. */
  private stale = false;
  private lastPosted: PanelSnapshot | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly data: FarmData,
    private readonly host: PanelHost,
  ) {
    super();
    this._register({ dispose: () => this.releaseView() });
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.releaseView();
    this.view = view;
    const distUri = vscode.Uri.joinPath(this.extensionUri, "dist");
    const mediaUri = vscode.Uri.joinPath(this.extensionUri, "media");
    view.webview.options = { enableScripts: true, localResourceRoots: [distUri, mediaUri] };
    view.webview.html = this.html(view.webview);
    // The farm's figures are fetched only while the panel can be seen.
    let using: vscode.Disposable | undefined = view.visible ? this.data.use() : undefined;
    this.viewDisposables.push(
      { dispose: () => void using?.dispose() },
      view.webview.onDidReceiveMessage((raw) => this.receive(raw)),
      view.onDidChangeVisibility(() => {
        if (view.visible && !using) using = this.data.use();
        if (!view.visible && using) using = (using.dispose(), undefined);
        if (view.visible && this.stale) this.show(this.host.snapshot());
      }),
      view.onDidDispose(() => {
        if (this.view === view) this.releaseView();
      }),
    );
  }

  /** Show this state in the panel if it is showing; a hidden panel gets nothing until it shows again. */
  show(snapshot: PanelSnapshot): void {
    if (!this.view?.visible) {
      this.stale = true;
      return;
    }
    this.stale = false;
    this.lastPosted = snapshot;
    void this.post({ type: "snapshot", snapshot });
  }

  /** The state the panel was last sent (host tests: the webview renders exactly this). */
  posted(): PanelSnapshot | undefined {
    return this.view?.visible ? this.lastPosted : undefined;
  }

  private releaseView(): void {
    for (const d of this.viewDisposables.splice(0)) d.dispose();
    this.view = undefined;
    this.stale = false;
  }

  private receive(raw: unknown): void {
    const parsed = parsePanelRequest(raw);
    if (!parsed.ok) {
      this.host.log.warn(`Control panel sent a malformed message, ignored: ${parsed.reason}`);
      void this.post({ type: "rejected", reason: parsed.reason });
      return;
    }
    const request = parsed.request;
    if (request.type === "ready") {
      this.lastPosted = this.host.snapshot();
      void this.post({ type: "hello", version: this.host.version, snapshot: this.lastPosted });
    } else {
      this.host.perform(request);
    }
  }

  private post(message: PanelMessage): Thenable<boolean> | undefined {
    return this.view?.webview.postMessage(message);
  }

  private html(webview: vscode.Webview): string {
    return webviewPage(webview, {
      script: vscode.Uri.joinPath(this.extensionUri, "dist", "webview.js"),
      style: vscode.Uri.joinPath(this.extensionUri, "media", "panel", "panel.css"),
      title: "Farmhand",
      body: `  <p id="answer" role="status">Waiting for Farmhand…</p>
  <p id="rejected" class="warning" role="alert" hidden></p>
  <section id="state" hidden>
    <h2 id="status"></h2>
    <p id="farm" class="label"></p>
    <div class="actions">
      <button id="toggle" type="button"></button>
      <button id="join" type="button" hidden>Join a Farm…</button>
      <button id="snooze" type="button" class="secondary">Snooze 1 Hour</button>
      <button id="finish" type="button" class="secondary">Finish Current Jobs and Stop</button>
      <button id="fix" type="button" class="secondary" hidden></button>
    </div>
    <p id="refused" class="warning" hidden></p>
    <h3>This machine</h3>
    <ul id="jobs"></ul>
    <p id="contribution" class="label"></p>
    <p id="credit" class="label" hidden></p>
    <p><span id="apps"></span> <button id="appsSwitch" type="button" class="secondary small"></button></p>
    <h3>Policy</h3>
    <p id="policy"></p>
    <ul id="problems" class="warning"></ul>
    <p id="farmError" class="warning" hidden></p>
    <div id="farmPart" hidden>
      <h3>Farm</h3>
      <p id="counts"></p>
      <p class="label" id="throughputLabel"></p>
      <svg id="chart" class="chart" viewBox="0 0 240 48" preserveAspectRatio="none" role="img" aria-label="Jobs finished per minute over the last hour"></svg>
      <h3>Workers</h3>
      <ul id="workers"></ul>
      <h3 id="deadTitle">Dead letters</h3>
      <ul id="dead"></ul>
      <p id="manageHint" class="label" hidden>Retry and delete need a key with the managing right: ask your operator.</p>
    </div>
  </section>`,
    });
  }
}
