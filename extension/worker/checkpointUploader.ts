/**
 * Uploads one job's checkpoints: at most one upload per `everyMs`, and only the latest of those saved meanwhile
 * (a checkpoint replaces the one before it, so the ones in between need never travel). `flush` sends what is
 * still waiting, for the last writes before a job is given back or retried.
 */
export class CheckpointUploader {
  private latest: string | undefined;
  private lastUploadAt = Number.NEGATIVE_INFINITY;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly upload: (data: string) => Promise<void>,
    private readonly options: { everyMs: number; onError(e: unknown): void },
  ) {}

  save(data: string): void {
    if (this.closed) return;
    this.latest = data;
    this.schedule();
  }

  /** Send the checkpoint still waiting, if any, now (after an upload in flight). Never throws. */
  async flush(): Promise<void> {
    this.clearTimer();
    await this.inFlight;
    if (this.latest !== undefined && !this.closed) await this.send();
  }

  /** Drop what waits and upload nothing more (the job ended, or its lease is gone). */
  close(): void {
    this.closed = true;
    this.latest = undefined;
    this.clearTimer();
  }

  private schedule(): void {
    if (this.timer || this.inFlight) return;
    const wait = this.lastUploadAt + this.options.everyMs - Date.now();
    if (wait <= 0) void this.send();
    else this.timer = setTimeout(() => void this.send(), wait);
  }

  private async send(): Promise<void> {
    this.clearTimer();
    const data = this.latest;
    if (data === undefined || this.closed) return;
    this.latest = undefined;
    this.lastUploadAt = Date.now();
    const upload = this.upload(data).catch((e: unknown) => this.options.onError(e));
    this.inFlight = upload;
    await upload;
    this.inFlight = undefined;
    // saved while the upload was on its way: its turn comes after the interval
    if (this.latest !== undefined && !this.closed) this.schedule();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
