import { utf8Length, utf8Prefix } from "./utf8";

export type OutputBatcherOptions = {
  /** Largest chunk sent in one call, in UTF-8 bytes (the server caps a chunk's size so). */
  maxChunkBytes?: number;
  /** Send a partial line after this long without a newline or sentence end. */
  flushDelayMs?: number;
  /** Output kept while sends are slow; older text beyond this is dropped with a marker. */
  maxBufferedChars?: number;
  onError?: (e: unknown) => void;
};

const BOUNDARY = /[\n]|[.!?](\s|$)/;

/**
 * Batches streamed output: sends on a newline or sentence end, when a chunk is full, or after a short delay.
 * One send is in flight at a time, so a fast token stream coalesces into few calls, in order.
 */
export class OutputBatcher {
  private buffer = "";
  private bufferedBytes = 0;
  private inFlight: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private readonly maxChunk: number;
  private readonly delay: number;
  private readonly maxBuffered: number;

  constructor(
    private readonly send: (chunk: string) => Promise<void>,
    private readonly options: OutputBatcherOptions = {},
  ) {
    this.maxChunk = options.maxChunkBytes ?? 8_000;
    this.delay = options.flushDelayMs ?? 200;
    this.maxBuffered = options.maxBufferedChars ?? 1_000_000;
  }

  write(text: string): void {
    if (this.stopped || text.length === 0) return;
    this.buffer += text;
    this.bufferedBytes += utf8Length(text);
    if (this.buffer.length > this.maxBuffered) {
      this.buffer = "[output truncated]\n" + this.buffer.slice(this.buffer.length - this.maxBuffered / 2);
      this.bufferedBytes = utf8Length(this.buffer);
    }
    if (BOUNDARY.test(text) || this.bufferedBytes >= this.maxChunk) this.pump();
    else this.armTimer();
  }

  /** Send everything still buffered and wait for it. */
  async close(): Promise<void> {
    this.clearTimer();
    while (!this.stopped && (this.buffer.length > 0 || this.inFlight)) {
      if (!this.inFlight) this.pump();
      await this.inFlight;
    }
    this.stopped = true;
  }

  /** Drop whatever is buffered and send nothing more (the lease is gone). */
  discard(): void {
    this.stopped = true;
    this.buffer = "";
    this.bufferedBytes = 0;
    this.clearTimer();
  }

  private pump(): void {
    this.clearTimer();
    if (this.inFlight || this.stopped || this.buffer.length === 0) return;
    const chunk = utf8Prefix(this.buffer, this.maxChunk);
    this.buffer = this.buffer.slice(chunk.length);
    this.bufferedBytes -= utf8Length(chunk);
    this.inFlight = this.send(chunk)
      .catch((e) => this.options.onError?.(e))
      .finally(() => {
        this.inFlight = undefined;
        if (this.buffer.length === 0 || this.stopped) return;
        if (BOUNDARY.test(this.buffer) || this.bufferedBytes >= this.maxChunk) this.pump();
        else this.armTimer();
      });
  }

  private armTimer(): void {
    if (this.timer || this.inFlight) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, this.delay);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
