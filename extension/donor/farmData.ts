import * as vscode from "vscode";
import type { FunctionReturnType } from "convex/server";
import { api } from "../../convex/_generated/api";
import type { FarmConnection } from "./farmConnection";
import { describeError, type DescribedError } from "../worker/errors";

export type Overview = FunctionReturnType<typeof api.farm.overview>;
export type DeadLetter = Overview["deadLetterList"][number];

/**
 * The farm as the views show it: one subscription to farm:overview (the per-org summary, dead letters
 * included, which changes at most every few seconds however many jobs move), held only while some view
 * that shows it is visible. Views call `use()` when they become visible and dispose the result when hidden.
 */
export class FarmData implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  overview: Overview | undefined;
  dead: DeadLetter[] = [];
  error: DescribedError | undefined;
  private users = 0;
  private unsubscribe: (() => void) | undefined;

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
    this.unsubscribe = this.connection.watch(
      api.farm.overview,
      {},
      (overview) => {
        this.overview = overview;
        this.dead = overview.deadLetterList;
        this.error = undefined;
        this.changed.fire();
      },
      (e) => {
        this.error = describeError(e);
        this.changed.fire();
      },
    );
  }

  private unsubscribeAll(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }
}
