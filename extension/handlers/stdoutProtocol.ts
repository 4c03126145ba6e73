import { HandlerError } from "../worker/errors";

/**
 * The stdout line protocol recipes and apps share: `{"progress": 0.5, "status": "…"}` lines report progress,
 * `{"checkpoint": "<base64>"}` lines are checkpoints (apps keep them), other lines stream as output, and the
 * last line is the result, as JSON. This module reads lines and says what each one is; what a program does
 * with them (hold JSON back, keep checkpoints) is its runner's business.
 */

/** What one non-blank stdout line is. `json`: JSON that is neither progress nor a checkpoint (the result, if it is the last). */
export type StdoutLine =
  | { kind: "progress"; progress?: number; status?: string }
  | { kind: "checkpoint"; data: string }
  | { kind: "json"; value: unknown }
  | { kind: "text" };

/** The line's JSON value, or undefined when it is not JSON (only a line that starts like JSON is parsed). */
export function parseJsonLine(line: string): unknown {
  const trimmed = line.trim();
  if (!/^[[{"\d-]|^(true|false|null)$/.test(trimmed)) return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}

export function classifyLine(line: string): StdoutLine {
  const value = parseJsonLine(line);
  if (value === undefined) return { kind: "text" };
  if (isProgress(value)) return { kind: "progress", progress: value.progress, status: value.status };
  if (isCheckpoint(value)) return { kind: "checkpoint", data: value.checkpoint };
  return { kind: "json", value };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Only `progress` (a number) and `status` (text), at least one of them. */
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

/** Exactly one field, `checkpoint`, a string. */
function isCheckpoint(v: unknown): v is { checkpoint: string } {
  return isObject(v) && Object.keys(v).length === 1 && typeof v.checkpoint === "string";
}

export type LineReaderOptions = {
  /** A line longer than this fails the run (not retryable), even before its newline arrives. Default: no limit. */
  maxLineChars?: number;
  /** Who printed it, for that error: "the app printed a line longer than …". */
  label?: string;
};

/**
 * Cuts a program's stdout (UTF-8 bytes, in chunks as they come) into lines and hands on each non-blank one,
 * without its line ending ("\n" or "\r\n"). A character split across chunks is joined; `end` hands on a last
 * line that has no newline.
 */
export class LineReader {
  private readonly decoder = new TextDecoder();
  private partial = "";
  private readonly maxLineChars: number;
  private readonly label: string;

  constructor(
    private readonly onLine: (line: string) => void,
    options: LineReaderOptions = {},
  ) {
    this.maxLineChars = options.maxLineChars ?? Number.POSITIVE_INFINITY;
    this.label = options.label ?? "the program";
  }

  write(bytes: Uint8Array): void {
    this.partial += this.decoder.decode(bytes, { stream: true });
    let nl: number;
    while ((nl = this.partial.indexOf("\n")) >= 0) {
      const line = this.partial.slice(0, nl);
      this.partial = this.partial.slice(nl + 1);
      this.line(line);
    }
    if (this.partial.length > this.maxLineChars) this.tooLong();
  }

  end(): void {
    this.partial += this.decoder.decode();
    const rest = this.partial;
    this.partial = "";
    if (rest) this.line(rest);
  }

  private line(raw: string): void {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.length > this.maxLineChars) this.tooLong();
    if (line.trim()) this.onLine(line);
  }

  private tooLong(): never {
    throw new HandlerError(`${this.label} printed a line longer than ${this.maxLineChars} characters`, { retryable: false });
  }
}
