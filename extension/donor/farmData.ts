import * as vscode from "vscode";
import type { FunctionReturnType } from "convex/server";
import { api } from "../../convex/_generated/api";
import type { FarmConnection } from "./farmConnection";
import { describeError, type DescribedError } from "../worker/errors";
import { DONOR_VIEW_QUERIES } from "./viewQueries";
import { CONNECT_GRACE_MS, type FarmFacts } from "../donorState/deriveDonorState";
import { connectionChanged, firstConnectMissed, opened, type ConnectionHistory } from "../donorState/connectionHistory";

export type Overview = FunctionReturnType<typeof api.farm.overview>;

/**
 * The farm as the views show it: one subscription to farm:overview (the per-org summary, dead letters and this
 * machine's credit included, which changes at most every few seconds however many jobs move), held only while
 * some view that shows it is visible. Views call `use()` when they become visible and dispose the result when hidden.
 * It also follows the subscription's connection, so figures the farm can no longer confirm read as last known.
 */
export class FarmData implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private overview: Overview | undefined;
  private answeredAt: number | undefined;
  private error: DescribedError | undefined;
  /** The subscription's connection since it was made; undefined while nobody watches. */
  private connectionHistory: ConnectionHistory | undefined;
  private users = 0;
  private unsubscribe: (() => void) | undefined;
  /** A farm that never answers: after CONNECT_GRACE_MS it is down, not loading. */
  private connectTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly connection: FarmConnection) {}

  /** What the donor state reads. */
  facts(): FarmFacts {
    return {
      watched: this.users > 0,
      ...(this.overview ? { overview: this.overview, answeredAt: this.answeredAt } : {}),
      ...(this.error ? { error: this.error } : {}),
      ...(this.connectionHistory?.kind === "down" ? { downSince: this.connectionHistory.since } : {}),
    };
  }

  use(): vscode.Disposable {
    if (this.users++ === 0) this.subscribe();
    let done = false;
    return new vscode.Disposable(() => {
      if (done) return;
      done = true;
      if (--this.users === 0) this.unsubscribeAll();
    });
  }

  /** The farm changed (joined, left, another key): subscribe again if anyone is watching. */
  reset(): void {
    this.unsubscribeAll();
    this.overview = undefined;
    this.answeredAt = undefined;
    this.error = undefined;
    if (this.users > 0) this.subscribe();
    this.changed.fire();
  }

  dispose(): void {
    this.unsubscribeAll();
    this.changed.dispose();
  }

  private subscribe(): void {
    this.connectionHistory = opened(Date.now());
    this.connectTimer = setTimeout(() => {
      this.connectTimer = undefined;
      if (this.connectionHistory?.kind !== "never") return;
      this.connectionHistory = firstConnectMissed(this.connectionHistory);
      this.error ??= { kind: "unreachable", message: "could not connect to the farm" };
      this.changed.fire();
    }, CONNECT_GRACE_MS);
    const [overview] = DONOR_VIEW_QUERIES;
    this.unsubscribe = this.connection.watch(
      overview,
      {},
      (overview) => {
        this.overview = overview;
        this.answeredAt = Date.now();
        this.error = undefined;
        this.changed.fire();
      },
      (e) => {
        this.error = describeError(e);
        this.changed.fire();
      },
      (connected) => this.onConnection(connected),
    );
  }

  private onConnection(connected: boolean): void {
    if (!this.connectionHistory) return;
    this.connectionHistory = connectionChanged(this.connectionHistory, connected, Date.now());
    if (connected && this.error?.kind === "unreachable") this.error = undefined;
    this.changed.fire();
  }

  private unsubscribeAll(): void {
    if (this.connectTimer) clearTimeout(this.connectTimer);
    this.connectTimer = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.connectionHistory = undefined;
  }
}
