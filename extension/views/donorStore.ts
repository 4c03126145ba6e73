import * as vscode from "vscode";
import { deriveDonorState, type DonorFacts } from "../hostAndWebview/deriveDonorState";
import type { DonorState } from "../hostAndWebview/donorState";
import { DisposableOwner } from "../lifecycle";
import { Throttle } from "./throttle";

/** Progress arrives up to 10 times a second per job: the state is derived again at most once per this window. */
const DERIVE_EVERY_MS = 100;
/** While the state depends on time passing (connecting: offline after a grace), derive it again this often. */
const TICK_MS = 1_000;

/**
 * The one store of this window's donor state: every source (membership, policy, engine, farm data) asks it to
 * derive the state again; it derives once per burst and tells every surface (status bar, tree, panel, context
 * keys) the same state, only when it changed. Nobody reads the sources on their own.
 */
export class DonorStore extends DisposableOwner {
  private readonly changed = this._register(new vscode.EventEmitter<DonorState>());
  readonly onDidChange = this.changed.event;
  private current: DonorState;
  private lastJson = "";
  private readonly throttle = this._register(new Throttle(() => this.derive(), DERIVE_EVERY_MS));
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

  /** Derive now (a caller that is about to show the state, e.g. a toast right after a command). */
  refresh(): DonorState {
    this.derive();
    return this.current;
  }

  private derive(): void {
    this.current = deriveDonorState(this.facts());
    clearTimeout(this.tick);
    this.tick = this.current.status.kind === "starting" ? setTimeout(() => this.request(), TICK_MS) : undefined;
    const json = comparable(this.current);
    if (json === this.lastJson) return;
    this.lastJson = json;
    this.changed.fire(this.current);
  }
}

/** The state without its timestamp: a new derivation of the same facts is no change. */
function comparable(state: DonorState): string {
  return JSON.stringify({ ...state, at: 0 });
}
