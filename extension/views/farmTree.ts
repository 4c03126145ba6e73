import * as vscode from "vscode";
import type { DeadLetter, FarmData, Overview } from "../donor/farmData";
import { farmProblemText } from "../hostAndWebview/donorStatus";
import { ago, duration, percent } from "../hostAndWebview/format";
import type { PanelJob, PanelSnapshot } from "../hostAndWebview/panelProtocol";
import { DisposableOwner } from "../lifecycle";
import { Throttle } from "./throttle";

type SectionId = "machine" | "queue" | "workers" | "dead";
/** Longer than VS Code's 200 ms debounce of tree changes, short enough to watch a job's progress. */
const MACHINE_REFRESH_MS = 500;
type Node =
  | { kind: "section"; id: SectionId }
  | { kind: "job"; job: PanelJob }
  | { kind: "lane"; lane: Overview["lanes"][number] }
  | { kind: "worker"; worker: Overview["workers"][number] }
  | { kind: "dead"; dead: DeadLetter; canManage: boolean }
  | { kind: "note"; text: string };

/**
 * The "Farm" tree: This machine, Queue, Workers, Dead letters. Uses the farm's data only while the view is
 * visible, and refreshes only the sections whose data changed. Not joined or unreachable: no items, so VS Code
 * shows the matching welcome view.
 */
export class FarmTree extends DisposableOwner implements vscode.TreeDataProvider<Node> {
  static readonly viewId = "farmhand.farm";
  private readonly changed = this._register(new vscode.EventEmitter<Node | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  private readonly sections: Record<SectionId, Node> = {
    machine: { kind: "section", id: "machine" },
    queue: { kind: "section", id: "queue" },
    workers: { kind: "section", id: "workers" },
    dead: { kind: "section", id: "dead" },
  };
  private readonly view: vscode.TreeView<Node>;
  private using: vscode.Disposable | undefined;
  private lastJson: Partial<Record<SectionId, string>> = {};
  private lastError: string | undefined;
  /** What "This machine" shows: the latest snapshot the views were given. */
  private machine: Pick<PanelSnapshot, "jobs" | "statusText"> = { jobs: [], statusText: "" };
  /**
   * VS Code debounces a tree's change events (200 ms, restarted by each event, no maximum wait), so a job reporting
   * progress every 100 ms would otherwise keep the tree from redrawing for as long as it runs.
   */
  private readonly machineRefresh = this._register(new Throttle(() => this.changed.fire(this.sections.machine), MACHINE_REFRESH_MS));

  constructor(
    private readonly data: FarmData,
    private readonly isJoined: () => boolean,
  ) {
    super();
    this.view = this._register(vscode.window.createTreeView(FarmTree.viewId, { treeDataProvider: this }));
    this._register(this.view.onDidChangeVisibility(() => this.followVisibility()));
    this._register(data.onDidChange(() => this.onData()));
    this._register({ dispose: () => void this.using?.dispose() });
    this.followVisibility();
  }

  /** Joined or left: redraw everything. */
  refresh(): void {
    this.lastJson = {};
    this.changed.fire(undefined);
  }

  /** The engine's jobs or status changed: refresh "This machine" only, at most once per MACHINE_REFRESH_MS. */
  showMachine(snapshot: Pick<PanelSnapshot, "jobs" | "statusText">): void {
    this.machine = snapshot;
    if (this.view.visible) this.machineRefresh.request();
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case "section":
        return this.sectionItem(node.id);
      case "job": {
        const { job } = node;
        const item = new vscode.TreeItem(job.type);
        item.id = `job:${job.jobId}`;
        item.description = [percent(job.progress), duration(Date.now() - job.startedAt), job.status].filter(Boolean).join(" · ");
        item.tooltip = `Job ${job.jobId}\nattempt ${job.attempt}${job.status ? `\n${job.status}` : ""}`;
        item.iconPath = new vscode.ThemeIcon("sync~spin");
        item.contextValue = "farmhand.runningJob";
        return item;
      }
      case "lane": {
        const { lane } = node;
        const item = new vscode.TreeItem(lane.capabilities.length ? lane.capabilities.join(", ") : "any worker");
        item.id = `lane:${lane.routingKey}`;
        item.description = `${lane.pending} pending · ${lane.running} running`;
        item.iconPath = new vscode.ThemeIcon("list-ordered");
        return item;
      }
      case "worker": {
        const { worker } = node;
        const item = new vscode.TreeItem(worker.isMe ? `${worker.name} (this machine)` : worker.name);
        item.id = `worker:${worker.workerId}`;
        item.description = worker.revoked ? "revoked" : worker.online ? `online · up to ${worker.maxConcurrentJobs} jobs` : `last seen ${ago(worker.lastSeenAt)}`;
        item.iconPath = new vscode.ThemeIcon(worker.online ? "vm-active" : "vm-outline");
        return item;
      }
      case "dead": {
        const { dead } = node;
        const item = new vscode.TreeItem(dead.type);
        item.id = `dead:${dead.jobId}`;
        item.description = dead.error ?? "";
        item.tooltip = `Job ${dead.jobId}\n${dead.attempt} of ${dead.maxAttempts} attempts${dead.error ? `\n${dead.error}` : ""}`;
        item.iconPath = new vscode.ThemeIcon("error");
        item.contextValue = node.canManage ? "farmhand.deadLetter.manage" : "farmhand.deadLetter";
        return item;
      }
      case "note":
        return Object.assign(new vscode.TreeItem(node.text), { iconPath: new vscode.ThemeIcon("info") });
    }
  }

  getChildren(node?: Node): Node[] {
    if (!this.isJoined() || this.data.error) return [];
    if (!node) return [this.sections.machine, this.sections.queue, this.sections.workers, this.sections.dead];
    if (node.kind !== "section") return [];
    const { overview: o, dead } = this.data;
    const orNote = (nodes: Node[], text: string) => (nodes.length ? nodes : [{ kind: "note" as const, text }]);
    switch (node.id) {
      case "machine":
        return orNote(this.machine.jobs.map((job) => ({ kind: "job", job })), "No jobs running here");
      case "queue":
        return o ? orNote(o.lanes.filter((l) => l.pending + l.running > 0).map((lane) => ({ kind: "lane", lane })), "The queue is empty") : [{ kind: "note", text: "Loading…" }];
      case "workers":
        return o ? o.workers.map((worker) => ({ kind: "worker", worker })) : [{ kind: "note", text: "Loading…" }];
      case "dead":
        return orNote(dead.map((d) => ({ kind: "dead", dead: d, canManage: o?.canManage ?? false })), "No dead letters");
    }
  }

  private sectionItem(id: SectionId): vscode.TreeItem {
    const o = this.data.overview;
    const labels: Record<SectionId, [string, string, string]> = {
      machine: ["This machine", this.machine.statusText, "device-desktop"],
      queue: ["Queue", o ? `${o.counts.pending ?? 0} pending · ${o.counts.running ?? 0} running` : "", "layers"],
      workers: ["Workers", o ? `${o.workersOnline} online` : "", "server-environment"],
      dead: ["Dead letters", o ? String(o.deadLetters) : "", "warning"],
    };
    const [label, description, icon] = labels[id];
    const item = new vscode.TreeItem(label, id === "dead" || id === "workers" ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.Expanded);
    item.id = `section:${id}`;
    item.description = description;
    item.iconPath = new vscode.ThemeIcon(icon);
    return item;
  }

  private followVisibility(): void {
    if (this.view.visible && !this.using) {
      this.using = this.data.use();
      this.machineRefresh.request(); // hidden, "This machine" was not refreshed
    }
    if (!this.view.visible && this.using) {
      this.using.dispose();
      this.using = undefined;
    }
  }

  private onData(): void {
    const { overview: o, dead } = this.data;
    const error = this.data.error && farmProblemText(this.data.error);
    if (error !== this.lastError) {
      this.lastError = error;
      this.view.message = error;
      void vscode.commands.executeCommand("setContext", "farmhand.unreachable", this.data.error?.kind === "unreachable");
      void vscode.commands.executeCommand("setContext", "farmhand.keyRefused", this.data.error?.kind === "refused");
      this.refresh();
      return;
    }
    const now: Partial<Record<SectionId, string>> = {
      queue: JSON.stringify([o?.counts, o?.lanes]),
      workers: JSON.stringify([o?.workersOnline, o?.workers.map((w) => [w.name, w.online, w.revoked])]),
      dead: JSON.stringify([o?.deadLetters, o?.canManage, dead]),
    };
    for (const id of Object.keys(now) as SectionId[]) {
      if (now[id] !== this.lastJson[id]) this.changed.fire(this.sections[id]);
    }
    this.lastJson = now;
  }
}
