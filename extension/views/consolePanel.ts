import * as vscode from "vscode";
import { api } from "../../convex/_generated/api";
import type { FarmConnection } from "../donor/farmConnection";
import { parseConsoleRequest, type ConsoleMessage, type ConsoleRequest, type ConsoleState } from "../hostAndWebview/consoleProtocol";
import { DisposableOwner } from "../lifecycle";
import { describeError } from "../worker/errors";
import { performConsoleAction } from "./consoleActions";
import { webviewPage } from "./webviewPage";

const JOBS_SHOWN = 50;
/** Workers per page of the Workers page (most recently seen first). */
const WORKERS_SHOWN = 100;

/**
 * The operator's console: one webview editor tab (Farmhand: Open Console). It subscribes only to what the
 * page in view shows (and the job opened on the Jobs page), through the farm connection with this machine's
 * key; the server checks that key's canManage right on every call. Every inbound message is validated.
 */
export class ConsolePanel extends DisposableOwner {
  static readonly viewType = "farmhand.console";
  private panel: vscode.WebviewPanel | undefined;
  private state: ConsoleState = { page: "overview", filter: {} };
  private jobId: string | null = null;
  /** The Jobs page's pages so far: the cursor each starts at (the last is the one shown), and where the next older one starts. */
  private cursors: Array<string | null> = [null];
  private olderCursor: string | null = null;
  /** The same for the Workers page. */
  private workerCursors: Array<string | null> = [null];
  private olderWorkersCursor: string | null = null;
  private unwatchPage: (() => void) | undefined;
  private unwatchJob: (() => void) | undefined;
  private unwatchBulk: (() => void) | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly connection: FarmConnection,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this._register({ dispose: () => this.close() });
  }

  /**
   * Farmhand: Open Console. Only for a machine whose key may manage the farm; anyone else is told why.
   * (The server checks the right again on every console call.)
   */
  async open(): Promise<void> {
    const lease = this.connection.acquire();
    if (!lease) return void vscode.window.showInformationMessage("Farmhand: join a farm first; the console shows the farm this machine joined.");
    try {
      const overview = await lease.client.query(api.farm.overview, { apiKey: lease.apiKey });
      if (!overview.canManage) {
        void vscode.window.showWarningMessage(
          "Farmhand: the console is for operators. This machine's key was not enrolled with permission to manage the farm (canManage).",
        );
        return;
      }
      this.show();
    } catch (e) {
      void vscode.window.showErrorMessage(`Farmhand: cannot open the console: ${describeError(e).message}`);
    } finally {
      lease.release();
    }
  }

  /** Show the console, or bring it to the front. */
  private show(): void {
    if (this.panel) return this.panel.reveal();
    const panel = vscode.window.createWebviewPanel(ConsolePanel.viewType, "Farmhand Console", vscode.ViewColumn.Active, {
      enableScripts: true,
      retainContextWhenHidden: false,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, "dist")],
    });
    this.panel = panel;
    panel.webview.html = this.html(panel.webview);
    panel.webview.onDidReceiveMessage((raw) => void this.receive(raw));
    panel.onDidDispose(() => {
      if (this.panel === panel) this.close();
    });
  }

  private close(): void {
    this.jobId = null;
    this.watchJob();
    this.unwatchBulk?.();
    this.unwatchBulk = undefined;
    this.unwatchPage?.();
    this.unwatchPage = undefined;
    const panel = this.panel;
    this.panel = undefined;
    panel?.dispose();
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = parseConsoleRequest(raw);
    if (!parsed.ok) {
      this.log.warn(`Console sent a malformed message, ignored: ${parsed.reason}`);
      this.post({ type: "rejected", reason: parsed.reason });
      return;
    }
    try {
      await this.perform(parsed.request);
    } catch (e) {
      const described = describeError(e);
      this.log.warn(`Console: ${described.message}`);
      this.post({ type: "notice", text: described.message });
    }
  }

  private async perform(request: ConsoleRequest): Promise<void> {
    switch (request.type) {
      case "ready":
        this.watchPage();
        return this.push();
      case "page":
        this.state = { page: request.page, filter: this.state.filter, bulk: this.state.bulk };
        this.jobId = null;
        this.watchJob();
        this.watchPage();
        return this.push();
      case "filter":
        this.state = { ...this.state, filter: request.filter, jobs: undefined };
        this.cursors = [null];
        this.watchPage();
        return this.push();
      case "jobsPage":
        if (request.to === "newest") this.cursors = [null];
        else if (this.olderCursor !== null) this.cursors = [...this.cursors, this.olderCursor];
        else return;
        this.state = { ...this.state, jobs: undefined };
        this.watchPage();
        return this.push();
      case "workersPage":
        if (request.to === "newer") this.workerCursors = this.workerCursors.slice(0, Math.max(1, this.workerCursors.length - 1));
        else if (this.olderWorkersCursor !== null) this.workerCursors = [...this.workerCursors, this.olderWorkersCursor];
        else return;
        this.watchPage();
        return this.push();
      case "openJob":
        this.jobId = request.jobId;
        this.state = { ...this.state, job: undefined };
        this.watchJob();
        return this.push();
      default: {
        const outcome = await performConsoleAction(this.connection, request, this.state.filter);
        if (outcome === undefined) return;
        if ("notice" in outcome) return this.post({ type: "notice", text: outcome.notice });
        if ("token" in outcome) return this.post({ type: "token", token: outcome.token });
        return this.watchBulk(outcome.bulkId);
      }
    }
  }

  /** Subscribe to what the current page shows (and nothing else). */
  private watchPage(): void {
    this.unwatchPage?.();
    this.unwatchPage = undefined;
    const onError = (e: Error) => this.update({ error: describeError(e).message });
    const state = this.state;
    let unwatch: (() => void) | undefined;
    switch (state.page) {
      case "overview":
        unwatch = this.connection.watch(api.console.overview, {}, (overview) => this.update({ overview, error: undefined }), onError);
        break;
      case "jobs": {
        this.olderCursor = null;
        const page = this.cursors.length - 1;
        const cursor = this.cursors[page] ?? null;
        unwatch = this.connection.watch(
          api.console.jobs,
          { filter: state.filter, paginationOpts: { numItems: JOBS_SHOWN, cursor } },
          (answer) => {
            this.olderCursor = answer.isDone ? null : answer.continueCursor;
            this.update({ jobs: { rows: answer.page, checked: answer.checked, scanned: answer.scanned, page, hasOlder: !answer.isDone }, error: undefined });
          },
          onError,
        );
        break;
      }
      case "workers": {
        this.olderWorkersCursor = null;
        const page = this.workerCursors.length - 1;
        const paginationOpts = { numItems: WORKERS_SHOWN, cursor: this.workerCursors[page] ?? null };
        const unwatchWorkers = this.connection.watch(
          api.console.workers,
          { paginationOpts },
          (answer) => {
            this.olderWorkersCursor = answer.isDone ? null : answer.continueCursor;
            this.update({ workers: answer.page, workersPaging: { page, hasOlder: !answer.isDone }, error: undefined });
          },
          onError,
        );
        const unwatchBoard = this.connection.watch(api.console.leaderboard, {}, (leaderboard) => this.update({ leaderboard }), onError);
        unwatch = unwatchWorkers && (() => (unwatchWorkers(), unwatchBoard?.()));
        break;
      }
      case "access":
        unwatch = this.connection.watch(api.consoleAccess.list, {}, (access) => this.update({ access, error: undefined }), onError);
        break;
    }
    if (!unwatch) this.update({ error: "This machine has not joined a farm." });
    this.unwatchPage = unwatch;
  }

  /** Follow a bulk action's progress row until another one starts or the console closes. */
  private watchBulk(bulkId: string): void {
    this.unwatchBulk?.();
    this.update({ bulk: null });
    this.unwatchBulk = this.connection.watch(
      api.console.bulkStatus,
      { bulkId },
      (bulk) => this.update({ bulk }),
      (e) => this.update({ error: describeError(e).message }),
    );
  }

  /** Subscribe to the job opened on the Jobs page (none: stop the last one). Each unsubscribe runs once. */
  private watchJob(): void {
    this.unwatchJob?.();
    this.unwatchJob = undefined;
    if (!this.jobId) return;
    this.unwatchJob = this.connection.watch(
      api.console.job,
      { jobId: this.jobId },
      (job) => this.update({ job }),
      (e) => this.update({ error: describeError(e).message }),
    );
  }

  private update(change: Partial<ConsoleState>): void {
    this.state = { ...this.state, ...change };
    this.push();
  }

  private push(): void {
    this.post({ type: "state", state: this.state });
  }

  private post(message: ConsoleMessage): void {
    void this.panel?.webview.postMessage(message);
  }

  private html(webview: vscode.Webview): string {
    return webviewPage(webview, {
      script: vscode.Uri.joinPath(this.extensionUri, "dist", "console.js"),
      // one stylesheet: the console's own rules and uPlot's, bundled by esbuild next to the script
      style: vscode.Uri.joinPath(this.extensionUri, "dist", "console.css"),
      title: "Farmhand Console",
      body: "",
    });
  }
}
