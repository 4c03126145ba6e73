import * as vscode from "vscode";
import type { ConsoleSession } from "../donor/consoleSession";
import type { Membership } from "../donor/membership";
import type { OperatorKeyStore } from "../donor/operatorKey";
import { parseConsoleRequest, resultImages, type ConsoleMessage, type ConsoleRequest, type ConsoleState } from "../protocol/consoleProtocol";
import { DisposableOwner } from "../lifecycle";
import { describeError } from "../worker/errors";
import { performConsoleAction } from "./consoleActions";
import { askOperatorKey } from "./operatorKeyFlow";
import { webviewPage } from "./webviewPage";

const JOBS_SHOWN = 50;
/** Workers per page of the Workers page (most recently seen first). */
const WORKERS_SHOWN = 100;

/** Monday 00:00 UTC of the week holding `ms` (1970-01-01 was a Thursday). */
function weekStart(ms: number): number {
  const day = Math.floor(ms / 86_400_000);
  return (day - ((day + 3) % 7)) * 86_400_000;
}

/**
 * The operator's console: one webview editor tab (Farmhand: Open Console). It subscribes only to what the
 * page in view shows (and the job opened on the Jobs page), through the console's session (donor/consoleSession.ts:
 * the console's own connection with its credential, an operator key or a worker key that may manage); the server
 * checks its right on every call. It only formats and forwards. It follows that credential (Leave Farm, Join, an
 * operator key entered) and the connection's state. Every
 * inbound message is validated.
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
  private unwatchConnection: (() => void) | undefined;
  /** The week the leaderboard shows; the page is watched again when the week turns. */
  private week = weekStart(Date.now());

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly session: ConsoleSession,
    private readonly operatorKeys: OperatorKeyStore,
    private readonly membership: Membership,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this._register({ dispose: () => this.close() });
    this._register(session.onDidChange(() => this.followCredential()));
  }

  /**
   * Farmhand: Open Console. With an operator key, or a worker key that may manage the farm, it opens; otherwise it
   * asks for an operator key (checked with the farm) and keeps it. (The server checks the right on every call.)
   */
  async open(): Promise<void> {
    let why = "This machine has no operator key.";
    try {
      const access = await this.session.access();
      if (access === "operator" || access === "manager") return this.show();
      if (access === "notManager") why = "The console is for operators: this machine's worker key may not manage the farm.";
    } catch (e) {
      return void vscode.window.showErrorMessage(`Farmhand: cannot open the console: ${describeError(e).message}`);
    }
    if (await this.enterOperatorKey(why)) this.show();
  }

  /** Farmhand: Enter Operator Key…: ask for one (checked with the farm) and keep it; true once kept. */
  async enterOperatorKey(why?: string): Promise<boolean> {
    const entered = await askOperatorKey({ url: this.operatorKeys.current?.url ?? (this.membership.joined ? this.membership.url : undefined), why });
    if (!entered) return false;
    await this.operatorKeys.store(entered);
    this.log.info(`Operator key ${entered.key.slice(0, 9)}… kept for the console of ${entered.url}`);
    return true;
  }

  /** Farmhand: Forget Operator Key: the console goes back to this machine's worker key, if it may manage. */
  async forgetOperatorKey(): Promise<void> {
    if (!this.operatorKeys.current) return void vscode.window.showInformationMessage("Farmhand: this machine keeps no operator key.");
    await this.operatorKeys.forget();
    void vscode.window.showInformationMessage("Farmhand: the operator key is forgotten on this machine.");
  }

  /** The credential changed: drop what the old one showed and subscribe again with the new one. */
  private followCredential(): void {
    if (!this.panel) return;
    this.cursors = [null];
    this.unwatchBulk?.();
    this.unwatchBulk = undefined;
    this.state = { page: this.state.page, filter: this.state.filter, credential: this.describeCredential() };
    this.watchConnection();
    this.watchPage();
    this.watchJob();
    this.push();
  }

  private describeCredential(): string | undefined {
    const credential = this.session.credential();
    if (!credential) return undefined;
    const prefix = `${credential.apiKey.slice(0, 9)}…`;
    return credential.kind === "operator" ? `operator key ${prefix}` : `this machine's worker key ${prefix}`;
  }

  /** Say when the farm is offline (what is shown is as of then), and when it is back. */
  private watchConnection(): void {
    this.unwatchConnection?.();
    this.unwatchConnection = this.session.watchConnection((connected) => this.update({ offlineSince: connected ? undefined : Date.now() }));
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
    this.state = { ...this.state, credential: this.describeCredential() };
    this.watchConnection();
    panel.webview.html = this.html(panel.webview);
    panel.webview.onDidReceiveMessage((raw) => void this.receive(raw));
    panel.onDidDispose(() => {
      if (this.panel === panel) this.close();
    });
  }

  private close(): void {
    this.unwatchConnection?.();
    this.unwatchConnection = undefined;
    this.state = { page: this.state.page, filter: this.state.filter };
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
        // a bulk action's status line belongs to the page and filter it ran on
        this.stopBulk();
        this.state = { page: request.page, filter: this.state.filter };
        this.jobId = null;
        this.watchJob();
        this.watchPage();
        return this.push();
      case "filter":
        this.stopBulk();
        this.state = { ...this.state, filter: request.filter, jobs: undefined, bulk: undefined, bulkFilter: undefined };
        this.cursors = [null];
        this.watchPage();
        return this.push();
      case "jobsPage":
        if (request.to === "newest") this.cursors = [null];
        else if (this.olderCursor !== null) this.cursors = [...this.cursors, this.olderCursor];
        else return;
        this.stopBulk();
        this.state = { ...this.state, jobs: undefined, bulk: undefined, bulkFilter: undefined };
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
      case "saveImage":
        return await this.saveImage(request.jobId, request.field);
      case "loadFairnessWeights": {
        const entries = await this.session.fairnessWeights(request.clientKeyId);
        return this.post({ type: "fairnessWeights", clientKeyId: request.clientKeyId, entries });
      }
      default: {
        const outcome = await performConsoleAction(this.session, request, this.state);
        if (outcome === undefined) return;
        if ("notice" in outcome) return this.post({ type: "notice", text: outcome.notice });
        if ("secret" in outcome) return this.post({ type: "secret", kind: outcome.kind, secret: outcome.secret });
        return this.watchBulk(outcome.bulkId);
      }
    }
  }

  /** The open job's result image, saved where the operator picks. */
  private async saveImage(jobId: string, field: string): Promise<void> {
    const job = this.state.job;
    const image = job?.jobId === jobId ? resultImages(job.result).find((i) => i.field === field) : undefined;
    if (!image) return this.post({ type: "notice", text: "That image is no longer shown: open the job again." });
    const home = vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({
      title: "Save the job's image",
      saveLabel: "Save Image",
      filters: { "PNG image": ["png"] },
      ...(home ? { defaultUri: vscode.Uri.joinPath(home, `${jobId}-${field}.png`) } : {}),
    });
    if (!target) return;
    await vscode.workspace.fs.writeFile(target, Buffer.from(image.base64, "base64"));
    this.post({ type: "notice", text: `Saved ${target.fsPath}.` });
  }

  /** Subscribe to what the current page shows (and nothing else). */
  private watchPage(): void {
    this.unwatchPage?.();
    this.unwatchPage = undefined;
    this.week = weekStart(Date.now());
    const onError = (e: Error) => this.update({ error: describeError(e).message });
    const state = this.state;
    let unwatch: (() => void) | undefined;
    switch (state.page) {
      case "overview": {
        const unwatchOverview = this.session.watchOverview((overview) => this.update({ overview, error: undefined }), onError);
        // energy given this week and per job type: a section of its own, below the overview's figures
        const unwatchEnergy = this.session.watchEnergy(this.week)((energy) => this.update({ energy }), onError);
        unwatch = unwatchOverview && (() => (unwatchOverview(), unwatchEnergy?.()));
        break;
      }
      case "jobs": {
        this.olderCursor = null;
        const page = this.cursors.length - 1;
        const cursor = this.cursors[page] ?? null;
        const unwatchJobs = this.session.watchJobs(state.filter, JOBS_SHOWN, cursor)(
          (answer) => {
            this.olderCursor = answer.isDone ? null : answer.continueCursor;
            this.update({ jobs: { rows: answer.page, checked: answer.checked, scanned: answer.scanned, page, hasOlder: !answer.isDone }, error: undefined });
          },
          onError,
        );
        // the client keys, by name: the filter's choice of key and the rows' key column
        const unwatchKeys = this.session.watchAccess((access) => this.update({ access }), onError);
        unwatch = unwatchJobs && (() => (unwatchJobs(), unwatchKeys?.()));
        break;
      }
      case "workers": {
        this.olderWorkersCursor = null;
        const page = this.workerCursors.length - 1;
        const unwatchWorkers = this.session.watchWorkers(WORKERS_SHOWN, this.workerCursors[page] ?? null)(
          (answer) => {
            this.olderWorkersCursor = answer.isDone ? null : answer.continueCursor;
            this.update({ workers: answer.page, workersPaging: { page, hasOlder: !answer.isDone }, error: undefined });
          },
          onError,
        );
        const unwatchBoard = this.session.watchLeaderboard(this.week)((leaderboard) => this.update({ leaderboard }), onError);
        unwatch = unwatchWorkers && (() => (unwatchWorkers(), unwatchBoard?.()));
        break;
      }
      case "access":
        unwatch = this.session.watchAccess((access) => this.update({ access, error: undefined }), onError);
        break;
      case "schedules":
        unwatch = this.session.watchSchedules((schedules) => this.update({ schedules, error: undefined }), onError);
        break;
    }
    if (!unwatch) {
      this.update({ error: "No key to show the farm with: this machine left its farm and keeps no operator key. Join a farm, or run Farmhand: Enter Operator Key…" });
    }
    this.unwatchPage = unwatch;
  }

  /** Follow a bulk action's progress row until another one starts or the console closes. */
  private watchBulk(bulkId: string): void {
    this.unwatchBulk?.();
    this.update({ bulk: null, bulkFilter: this.state.filter });
    this.unwatchBulk = this.session.watchBulk(bulkId)(
      (bulk) => this.update({ bulk }),
      (e) => this.update({ error: describeError(e).message }),
    );
  }

  /** Stop showing the bulk action's progress (the action itself goes on in the farm). */
  private stopBulk(): void {
    this.unwatchBulk?.();
    this.unwatchBulk = undefined;
  }

  /** Subscribe to the job opened on the Jobs page (none: stop the last one). Each unsubscribe runs once. */
  private watchJob(): void {
    this.unwatchJob?.();
    this.unwatchJob = undefined;
    if (!this.jobId) return;
    this.unwatchJob = this.session.watchJob(this.jobId)(
      (job) => this.update({ job }),
      (e) => this.update({ error: describeError(e).message }),
    );
  }

  private update(change: Partial<ConsoleState>): void {
    this.state = { ...this.state, ...change };
    // the week turned while the Workers page (the leaderboard) or the Overview (energy this week) was open
    if ((this.state.page === "workers" || this.state.page === "overview") && weekStart(Date.now()) !== this.week) this.watchPage();
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
