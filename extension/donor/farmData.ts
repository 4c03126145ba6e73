import * as vscode from "vscode";
import { makeFunctionReference } from "convex/server";
import type { FarmConnection } from "./farmConnection";
import { describeError, type DescribedError } from "../worker/errors";

export type Overview = {
  counts: Record<string, number>;
  lanes: Array<{ routingKey: string; capabilities: string[]; pending: number; running: number }>;
  workers: Array<{ workerId: string; name: string; online: boolean; revoked: boolean; lastSeenAt: number; maxConcurrentJobs: number; isMe: boolean }>;
  workersOnline: number;
  throughput: Array<{ minuteStart: number; finished: number }>;
  finishedLastHour: number;
  deadLetters: number;
  canManage: boolean;
};
export type DeadLetter = { jobId: string; type: string; attempt: number; maxAttempts: number; error?: string; finishedAt?: number };

const overviewQuery = makeFunctionReference<"query", { apiKey: string }, Overview>("farm:overview");
const deadLettersQuery = makeFunctionReference<"query", { apiKey: string; limit?: number }, DeadLetter[]>("farm:deadLetters");

/**
 * The farm as the views show it (overview + newest dead letters), subscribed only while some view that shows it
 * is visible. Views call `use()` when they become visible and dispose the result when hidden.
 */
export class FarmData implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  overview: Overview | undefined;
  dead: DeadLetter[] = [];
  error: DescribedError | undefined;
  private users = 0;
  private unsubscribe: Array<() => void> = [];

  constructor(private readonly connection: FarmConnection) {}

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
    this.dead = [];
    this.error = undefined;
    if (this.users > 0) this.subscribe();
    this.changed.fire();
  }

  dispose(): void {
    this.unsubscribeAll();
    this.changed.dispose();
  }

  private subscribe(): void {
    const fail = (e: Error) => {
      this.error = describeError(e);
      this.changed.fire();
    };
    const ok = (apply: () => void) => {
      apply();
      this.error = undefined;
      this.changed.fire();
    };
    this.unsubscribe = [
      this.connection.watch(overviewQuery, {}, (o) => ok(() => (this.overview = o)), fail),
      this.connection.watch(deadLettersQuery, { limit: 20 }, (d) => ok(() => (this.dead = d)), fail),
    ].filter((u): u is () => void => u !== undefined);
  }

  private unsubscribeAll(): void {
    this.unsubscribe.splice(0).forEach((u) => u());
  }
}
