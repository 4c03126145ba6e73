import type { Pausable } from "./idle/workWhileAway";

/**
 * Several reasons to pause one engine (the headless worker's --when-idle, --pause-while-running, SIGUSR1): each says
 * pause or resume through its own voter, and the engine runs only while none holds it. Running jobs are frozen while
 * any holding reason asks for that.
 */
export class PauseVotes {
  private readonly votes = new Map<string, { reason: string; suspend: boolean }>();

  constructor(private readonly engine: Pausable) {}

  voter(name: string): Pausable {
    return {
      pause: (reason, how) => {
        this.votes.set(name, { reason, suspend: how?.suspend === true });
        this.apply();
      },
      resume: () => {
        if (this.votes.delete(name)) this.apply();
      },
    };
  }

  private apply(): void {
    const holding = [...this.votes.values()];
    if (holding.length === 0) return this.engine.resume();
    const first = holding.find((v) => v.suspend) ?? holding[0];
    this.engine.pause(first.reason, { suspend: holding.some((v) => v.suspend) });
  }
}
