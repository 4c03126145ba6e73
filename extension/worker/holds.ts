import type { Clock, TimerId } from "./clock";
import type { ClaimedJob } from "./farmClient";
import type { JobRun } from "./jobRun";

/** `owner`: the machine's owner is back, every job is frozen; `gpu`: another program uses the GPU, GPU jobs are. */
export type Hold = "owner" | "gpu";

/** A job that needed more free memory than there was went back: no work is taken until the machine has it. */
export type MemoryHold = { kind: "none" } | { kind: "waiting"; neededMB: number; timer: TimerId };

export type HoldPorts = {
  clock: Clock;
  runs(): Iterable<JobRun>;
  freeMemoryMB(): number;
  memoryCheckEveryMs: number;
  /** The jobs frozen now, when that changed. */
  heldChanged(held: string[]): void;
  /** The memory a held-back job needed is free again. */
  memoryBack(): void;
};

const needsGpu = (job: ClaimedJob) => job.requirements?.gpu !== undefined;

/** The suspension controller: which jobs are frozen, and whether the engine waits for memory. */
export class Holds {
  private readonly holds = new Set<Hold>();
  private memory: MemoryHold = { kind: "none" };
  private lastHeld = "";

  constructor(private readonly ports: HoldPorts) {}

  get suspended(): boolean {
    return this.holds.has("owner");
  }

  /** GPU jobs are held: another program uses the GPU (or the donor named one that does). */
  get gpuHeld(): boolean {
    return this.holds.has("gpu");
  }

  get memoryHeld(): boolean {
    return this.memory.kind === "waiting";
  }

  get memoryState(): Readonly<MemoryHold> {
    return this.memory;
  }

  /** Freeze every running job; one that cannot be frozen goes back to the queue. */
  suspend(): void {
    this.holds.add("owner");
    for (const run of this.ports.runs()) if (!run.suspend()) run.abort("yield");
    this.emitHeld();
  }

  /** The owner left: jobs run on, except GPU jobs while the GPU is held. */
  thaw(): void {
    if (!this.holds.delete("owner")) return;
    for (const run of this.ports.runs()) if (!(this.holds.has("gpu") && needsGpu(run.job))) run.thaw();
    this.emitHeld();
  }

  /** Freeze (or give back) the GPU jobs while another program uses the GPU; `false` thaws them unless all are held. */
  holdGpu(hold: boolean): void {
    if (hold === this.holds.has("gpu")) return;
    if (hold) this.holds.add("gpu");
    else this.holds.delete("gpu");
    for (const run of this.ports.runs()) {
      if (!needsGpu(run.job)) continue;
      if (!hold) {
        if (!this.suspended) run.thaw();
      } else if (!run.suspend()) run.abort("yield");
    }
    this.emitHeld();
  }

  /** A job claimed just as a hold began: it has not got far, so another donor takes it. */
  mustYield(job: ClaimedJob): boolean {
    return this.suspended || (this.holds.has("gpu") && needsGpu(job));
  }

  jobEnded(): void {
    if (this.holds.size > 0) this.emitHeld();
  }

  /** Take no work until `neededMB` is free; looks again locally every memoryCheckEveryMs. */
  waitForMemory(neededMB: number): void {
    if (this.memory.kind === "waiting") {
      this.memory = { ...this.memory, neededMB: Math.min(this.memory.neededMB, neededMB) };
      return;
    }
    this.memory = { kind: "waiting", neededMB, timer: this.ports.clock.setTimeout(() => this.checkMemory(), this.ports.memoryCheckEveryMs) };
  }

  /** The engine stopped: no holds left. */
  reset(): void {
    if (this.memory.kind === "waiting") this.ports.clock.clearTimeout(this.memory.timer);
    this.memory = { kind: "none" };
    this.holds.delete("owner");
    this.lastHeld = "";
  }

  private checkMemory(): void {
    if (this.memory.kind !== "waiting") return;
    const { neededMB } = this.memory;
    if (this.ports.freeMemoryMB() < neededMB) {
      this.memory = { kind: "waiting", neededMB, timer: this.ports.clock.setTimeout(() => this.checkMemory(), this.ports.memoryCheckEveryMs) };
      return;
    }
    this.memory = { kind: "none" };
    this.ports.memoryBack();
  }

  /** Say which jobs are frozen now, when that changed (a policy that pauses again for the same reason changes nothing). */
  private emitHeld(): void {
    const held = [...this.ports.runs()].filter((run) => run.suspendedSince !== undefined).map((run) => run.job.jobId as string);
    const key = held.join();
    if (key === this.lastHeld) return;
    this.lastHeld = key;
    this.ports.heldChanged(held);
  }
}
