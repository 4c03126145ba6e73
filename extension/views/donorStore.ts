import * as vscode from "vscode";
import { deriveDonorState, type DonorFacts } from "../donorState/deriveDonorState";
import type { DonorState } from "../donorState/donorState";
import { DisposableOwner } from "../lifecycle";
import { Throttle } from "./throttle";

/**
 * Progress arrives up to 10 times a second per job: the state is derived again at most once per this window, and
 * every surface renders each state as it comes, with no pacing of its own. Longer than VS Code's 200 ms debounce of
 * tree changes (restarted by each change), so the tree redraws every state the status bar and the panel show.
 */
const DERIVE_EVERY_MS = 500;
/** While a view that shows ages is visible (or the state depends on time passing), derive it again this often. */
const TICK_MS = 1_000;

/**
 * The one store of this window's donor state: every source (membership, policy, engine, farm data) asks it to
 * derive the state again; it derives once per burst and hands every surface (status bar, tree, panel, context
 * keys) the same snapshot in the same call. It also ticks: while some view is visible it derives again every
 * second, so ages ("last seen 3m ago", "frozen 40s") move on; with nothing visible it holds no timer.
 */
export class DonorStore extends DisposableOwner {
  private readonly changed = this._register(new vscode.EventEmitter<DonorState>());
  readonly onDidChange = this.changed.event;
  private current: DonorState;
  private lastJson = "";
  private readonly throttle = this._register(new Throttle(() => this.derive(false), DERIVE_EVERY_MS));
  private tick: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly facts: () => DonorFacts) {
    super();
    this.current = deriveDonorState(facts());
    this.lastJson = comparable(this.current);
    this._register({ dispose: () => clearTimeout(this.tick) });
  }

  get state(): DonorState {
    return this.current;
  }

  /** Something the state is derived from changed: derive again soon (bursts coalesce). */
  request(): void {
    this.throttle.request();
  }

  /** Derive now (a caller that is about to show the state, e.g. a toast right after a command); the current snapshot. */
  refresh(): DonorState {
    this.derive(false);
    return this.current;
  }

  /** `ticked`: time passed (nothing else may have changed): the surfaces get the new snapshot for its ages. */
  private derive(ticked: boolean): void {
    const facts = this.facts();
    const next = deriveDonorState(facts);
    clearTimeout(this.tick);
    this.tick = needsTicks(next, facts) ? setTimeout(() => this.derive(true), TICK_MS) : undefined;
    const json = comparable(next);
    // Unchanged: the surfaces keep the snapshot they drew, and `state` stays that one (a panel that shows again is
    // sent exactly what the others show).
    if (json === this.lastJson && !ticked) return;
    this.current = next;
    this.lastJson = json;
    this.changed.fire(this.current);
  }
}

/** Time moves what is shown: a visible view shows ages; "starting" turns "offline" after a grace. */
function needsTicks(state: DonorState, facts: DonorFacts): boolean {
  return state.status.kind === "starting" || (facts.farm.watched && state.joined);
}

/** The state without its timestamp: a new derivation of the same facts is no change. */
function comparable(state: DonorState): string {
  return JSON.stringify({ ...state, at: 0 });
}
