import { HandlerError } from "../../worker/errors";

export type AppStdoutEvents = {
  progress(fraction: number | undefined, status: string | undefined): void;
  /** May throw (a checkpoint too big): the caller fails the job with that error. */
  checkpoint(data: string): void;
  output(text: string): void;
};

/** The longest line an app may print (a result or a checkpoint line fits well within it). */
const MAX_LINE_CHARS = 1024 * 1024;

/**
 * An app's stdout, by the recipe protocol: `{"progress": 0.5, "status": "…"}` lines report progress,
 * `{"checkpoint": "<base64>"}` lines are checkpoints, other lines stream as output, and the last line is the
 * result, as JSON. A JSON line is held back until the next line shows it was not the last, then streamed.
 */
export class AppStdout {
  private readonly decoder = new TextDecoder();
  private partial = "";
  private held: string | undefined;
  private last: string | undefined;

  constructor(
    private readonly events: AppStdoutEvents,
    private readonly maxLineChars = MAX_LINE_CHARS,
  ) {}

  write(bytes: Uint8Array): void {
    this.partial += this.decoder.decode(bytes, { stream: true });
    let nl: number;
    while ((nl = this.partial.indexOf("\n")) >= 0) {
      const line = this.partial.slice(0, nl);
      this.partial = this.partial.slice(nl + 1);
      this.line(line);
    }
    if (this.partial.length > this.maxLineChars) {
      throw new HandlerError(`the app printed a line longer than ${this.maxLineChars} characters`, { retryable: false });
    }
  }

  /** The end of stdout: the result, or why there is none. */
  end(): { ok: true; result: unknown } | { ok: false; lastLine: string | undefined } {
    this.partial += this.decoder.decode();
    if (this.partial) this.line(this.partial);
    this.partial = "";
    if (this.held === undefined) return { ok: false, lastLine: this.last };
    return { ok: true, result: JSON.parse(this.held) };
  }

  private line(raw: string): void {
    const line = raw.replace(/\r$/, "");
    if (line.length > this.maxLineChars) {
      throw new HandlerError(`the app printed a line longer than ${this.maxLineChars} characters`, { retryable: false });
    }
    if (!line.trim()) return;
    this.last = line;
    if (this.held !== undefined) {
      this.events.output(this.held + "\n");
      this.held = undefined;
    }
    const json = parseJsonLine(line);
    if (json === undefined) return this.events.output(line + "\n");
    if (isProgress(json)) return this.events.progress(json.progress, json.status);
    if (isCheckpoint(json)) return this.events.checkpoint(json.checkpoint);
    this.held = line;
  }
}

function parseJsonLine(line: string): unknown {
  const trimmed = line.trim();
  if (!/^[[{"\d-]|^(true|false|null)$/.test(trimmed)) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isProgress(v: unknown): v is { progress?: number; status?: string } {
  if (!isObject(v)) return false;
  const keys = Object.keys(v);
  return (
    keys.length > 0 &&
    keys.every((k) => k === "progress" || k === "status") &&
    (v.progress === undefined || typeof v.progress === "number") &&
    (v.status === undefined || typeof v.status === "string")
  );
}

function isCheckpoint(v: unknown): v is { checkpoint: string } {
  return isObject(v) && Object.keys(v).length === 1 && typeof v.checkpoint === "string";
}
