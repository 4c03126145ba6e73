/**
 * The donor's switch: what the user asked for (donate or not) and whether anything stops it right now.
 * Knows nothing about VS Code; the extension feeds it facts and renders its state.
 */
export type DonationState =
  | { kind: "off" }
  | { kind: "on" }
  | { kind: "paused"; reason: string };

export type DonationFacts = {
  /** The window is remote (SSH, container, code-server) and the donor has not allowed donating from it. */
  remoteNotAllowed: boolean;
};

type Listener = (state: DonationState) => void;

export class DonationSwitch {
  private wanted = false;
  private facts: DonationFacts = { remoteNotAllowed: false };
  private readonly listeners = new Set<Listener>();

  get state(): DonationState {
    if (!this.wanted) return { kind: "off" };
    if (this.facts.remoteNotAllowed) {
      return { kind: "paused", reason: "remote window (enable farmhand.allowRemoteDonation to donate from it)" };
    }
    return { kind: "on" };
  }

  get donating(): boolean {
    return this.state.kind === "on";
  }

  toggle(): DonationState {
    return this.set(!this.wanted);
  }

  set(wanted: boolean): DonationState {
    this.wanted = wanted;
    return this.emit();
  }

  updateFacts(facts: Partial<DonationFacts>): DonationState {
    this.facts = { ...this.facts, ...facts };
    return this.emit();
  }

  onDidChange(listener: Listener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  private emit(): DonationState {
    const state = this.state;
    for (const listener of this.listeners) listener(state);
    return state;
  }
}
