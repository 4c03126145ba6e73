import { readGpuUse, type GpuUse } from "./gpuInUse";

/** The piece of the engine the guard drives. */
export type GpuHolder = { readonly gpuJobs: number; holdGpuJobs(hold: boolean): void };

/** nvidia-smi is a heavy process (tens of ms of CPU): asked only while GPU jobs run, and not often. */
const EVERY_MS = 10_000;

/**
 * While this machine runs GPU jobs, looks whether another program uses the GPU; if so the GPU jobs are frozen
 * (or given back) until it stops. A machine where nvidia-smi gives no answer is not asked again.
 */
export class GpuGuard {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private held = false;

  constructor(
    private readonly engine: GpuHolder,
    private readonly log: (line: string) => void,
    private readonly read: (ourGpuJobsRunning: boolean) => Promise<GpuUse | undefined> = (ours) => readGpuUse(ours),
    private readonly everyMs = EVERY_MS,
  ) {}

  start(): void {
    if (!this.stopped && !this.timer) this.schedule();
  }

  dispose(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.check();
    }, this.everyMs);
  }

  private async check(): Promise<void> {
    if (this.engine.gpuJobs === 0 && !this.held) return this.schedule();
    const use = await this.read(this.engine.gpuJobs > 0 && !this.held);
    if (this.stopped) return;
    if (use === undefined) {
      if (this.held) this.set(false, "the GPU can no longer be read");
      return; // no NVIDIA GPU or driver here: nothing to guard
    }
    if (use.busy !== this.held) this.set(use.busy, use.busy ? use.why : "the GPU is free again");
    this.schedule();
  }

  private set(hold: boolean, why: string): void {
    this.held = hold;
    this.log(hold ? `GPU jobs frozen: ${why}` : `GPU jobs go on: ${why}`);
    this.engine.holdGpuJobs(hold);
  }
}
