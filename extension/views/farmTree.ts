import * as vscode from "vscode";
import type { FarmData } from "../donor/farmData";
import type { DeadLetterRow, DonorState, LaneRow, RunningJob, WorkerRow } from "../donorState/donorState";
import { laneLabel } from "../../convex/contract";
import { attemptsText, farmNotice, frozenNote, laneTooltip, laneWaitNote, refusedKeyText, statusSentence, workerText } from "../donorState/donorStateText";
import { duration, percent } from "../donorState/format";
import { DisposableOwner } from "../lifecycle";

type SectionId = "machine" | "queue" | "workers" | "dead";
type Node =
  | { kind: "section"; id: SectionId }
  | { kind: "job"; job: RunningJob }
  | { kind: "lane"; lane: LaneRow }
  | { kind: "worker"; worker: WorkerRow }
  | { kind: "dead"; dead: DeadLetterRow; canManage: boolean }
  | { kind: "note"; text: string };

/**
 * The "Farm" tree: This machine, Queue, Workers, Dead letters, all drawn from the donor state (the same snapshot the
 * status bar and the panel show, at the same moment: it has no pacing of its own; the store's pace is slower than
 * VS Code's tree debounce). Ages are the snapshot's (`state.at`), which the store advances every second while a view
 * is visible. Asks for the farm's data only while the view is visible, and refreshes only the sections whose text
 * changed. Not joined, key refused, or nothing known: no items, so VS Code shows the matching welcome view.
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
  private lastJson: Partial<Record<SectionId | "shown", string>> = {};
  private lastMessage: string | undefined;
  /** The snapshot (its `at`) the view was last told to draw: host tests check every surface draws the same one. */
  private renderedAt: number | undefined;

  constructor(
    private readonly data: FarmData,
    private state: DonorState,
  ) {
    super();
    this.view = this._register(vscode.window.createTreeView(FarmTree.viewId, { treeDataProvider: this }));
    this._register(this.view.onDidChangeVisibility(() => this.followVisibility()));
    this._register({ dispose: () => void this.using?.dispose() });
    this.followVisibility();
  }

  /** The donor state changed (or time passed): redraw the sections whose text differs, now. */
  show(state: DonorState): void {
    this.state = state;
    if (!this.view.visible) return; // drawn afresh when it shows again
    this.renderedAt = state.at;
    this.updateMessage();
    const now: Partial<Record<SectionId | "shown", string>> = {
      shown: JSON.stringify([this.showsFarm(), state.farm.freshness.kind]),
      machine: this.sectionText("machine"),
      queue: this.sectionText("queue"),
      workers: this.sectionText("workers"),
      dead: this.sectionText("dead"),
    };
    if (now.shown !== this.lastJson.shown) {
      this.lastJson = now;
      this.changed.fire(undefined);
      return;
    }
    for (const id of ["machine", "queue", "workers", "dead"] as const) if (now[id] !== this.lastJson[id]) this.changed.fire(this.sections[id]);
    this.lastJson = now;
  }

  /** A section as it would be drawn: its row and its children's, as text. */
  private sectionText(id: SectionId): string {
    if (!this.showsFarm()) return "";
    const text = (node: Node) => {
      const item = this.getTreeItem(node);
      return [item.label, item.description, item.tooltip, item.contextValue];
    };
    return JSON.stringify([text(this.sections[id]), ...this.getChildren(this.sections[id]).map(text)]);
  }

  /** What the view shows now, as text: its message and every row "label — description", depth first (host tests). */
  shown(): { message: string | undefined; rows: string[]; at?: number } {
    const rows: string[] = [];
    const walk = (nodes: Node[], depth: number) => {
      for (const node of nodes) {
        const item = this.getTreeItem(node);
        const label = typeof item.label === "string" ? item.label : (item.label?.label ?? "");
        rows.push(`${"  ".repeat(depth)}${label}${item.description ? ` — ${String(item.description)}` : ""}`);
        walk(this.getChildren(node), depth + 1);
      }
    };
    walk(this.getChildren(), 0);
    return { message: this.view.message, rows, ...(this.renderedAt === undefined ? {} : { at: this.renderedAt }) };
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.kind) {
      case "section":
        return this.sectionItem(node.id);
      case "job": {
        const { job } = node;
        const item = new vscode.TreeItem(job.type);
        item.id = `job:${job.jobId}`;
        const frozen = job.suspendedSince === undefined ? undefined : frozenNote(job.suspendedSince, this.state.at);
        item.description = [frozen, percent(job.progress), duration(this.state.at - job.startedAt), job.status].filter(Boolean).join(" · ");
        item.tooltip = `Job ${job.jobId}\nrunning for ${Math.round(this.state.at - job.startedAt).toLocaleString()} ms\nattempt ${job.attempt}${frozen ? `\n${frozen}: held while you use this machine` : ""}${job.status ? `\n${job.status}` : ""}`;
        item.iconPath = new vscode.ThemeIcon(frozen ? "debug-pause" : "sync~spin");
        item.contextValue = "farmhand.runningJob";
        return item;
      }
      case "lane": {
        const { lane } = node;
        const item = new vscode.TreeItem(laneLabel(lane));
        item.id = `lane:${lane.routingKey}`;
        const waitNote = laneWaitNote(lane);
        item.description = `${lane.pending} pending · ${lane.running} running${waitNote ? ` · ${waitNote}` : ""}`;
        item.tooltip = laneTooltip(lane);
        item.iconPath = new vscode.ThemeIcon(lane.servable && !lane.waitCode ? "list-ordered" : "warning");
        return item;
      }
      case "worker": {
        const { worker } = node;
        const item = new vscode.TreeItem(worker.isMe ? `${worker.name} (this machine)` : worker.name);
        item.id = `worker:${worker.workerId}`;
        item.description = workerText(worker, this.state.at);
        item.iconPath = new vscode.ThemeIcon(worker.online ? "vm-active" : "vm-outline");
        return item;
      }
      case "dead": {
        const { dead } = node;
        const item = new vscode.TreeItem(dead.type);
        item.id = `dead:${dead.jobId}`;
        item.description = dead.error ?? "";
        const hint = node.canManage ? "" : "\nRetry and delete need a key with the managing right: ask your operator.";
        item.tooltip = `Job ${dead.jobId}\n${attemptsText(dead)}${dead.error ? `\n${dead.error}` : ""}${hint}`;
        item.iconPath = new vscode.ThemeIcon("error");
        item.contextValue = node.canManage ? "farmhand.deadLetter.manage" : "farmhand.deadLetter";
        return item;
      }
      case "note":
        return Object.assign(new vscode.TreeItem(node.text), { iconPath: new vscode.ThemeIcon("info") });
    }
  }

  getChildren(node?: Node): Node[] {
    if (!this.showsFarm()) return [];
    if (!node) return [this.sections.machine, this.sections.queue, this.sections.workers, this.sections.dead];
    if (node.kind !== "section") return [];
    const { figures: f } = this.state.farm;
    const orNote = (nodes: Node[], text: string) => (nodes.length ? nodes : [{ kind: "note" as const, text }]);
    const loading: Node[] = [{ kind: "note", text: "Loading…" }];
    switch (node.id) {
      case "machine":
        return orNote(this.state.jobs.map((job) => ({ kind: "job", job })), "No jobs running here");
      case "queue":
        return f ? orNote(f.lanes.filter((l) => l.pending + l.running > 0).map((lane) => ({ kind: "lane", lane })), "The queue is empty") : loading;
      case "workers":
        return f ? f.workers.map((worker) => ({ kind: "worker", worker })) : loading;
      case "dead":
        return f ? orNote(f.dead.map((d) => ({ kind: "dead", dead: d, canManage: f.canManage })), "No dead letters") : loading;
    }
  }

  /** The sections show unless there is nothing true to show: not joined, key refused, the farm's data missing. */
  private showsFarm(): boolean {
    const { status, farm } = this.state;
    return status.kind !== "notJoined" && status.kind !== "revoked" && farm.freshness.kind !== "missing";
  }

  private sectionItem(id: SectionId): vscode.TreeItem {
    const f = this.state.farm.figures;
    const asOf = this.state.farm.freshness.kind === "lastKnown" ? " (last known)" : "";
    const labels: Record<SectionId, [string, string, string]> = {
      machine: ["This machine", statusSentence(this.state), "device-desktop"],
      queue: ["Queue", f ? `${f.counts.pending} pending · ${f.counts.running} running${asOf}` : "", "layers"],
      workers: ["Workers", f ? `${f.workersOnline} online${asOf}` : "", "server-environment"],
      dead: ["Dead letters", f ? String(f.deadTotal) : "", "warning"],
    };
    const [label, description, icon] = labels[id];
    const item = new vscode.TreeItem(label, id === "dead" || id === "workers" ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.Expanded);
    item.id = `section:${id}`;
    item.description = description;
    item.iconPath = new vscode.ThemeIcon(icon);
    return item;
  }

  /** The view's message: why the farm's data is old or missing, or that the key was refused. */
  private updateMessage(): void {
    const { status, farm } = this.state;
    const message = status.kind === "revoked" ? refusedKeyText(status.problem) : status.kind === "notJoined" ? undefined : farmNotice(farm.freshness, this.state.at);
    const shown = message === "Loading…" ? undefined : message;
    if (shown === this.lastMessage) return;
    this.lastMessage = shown;
    this.view.message = shown;
  }

  private followVisibility(): void {
    if (this.view.visible && !this.using) {
      this.using = this.data.use();
      this.lastJson = {};
      this.show(this.state);
    }
    if (!this.view.visible && this.using) {
      this.using.dispose();
      this.using = undefined;
      this.renderedAt = undefined;
    }
  }
}
