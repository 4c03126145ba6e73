import { classifyLine, LineReader } from "../stdoutProtocol";

export type AppStdoutEvents = {
  progress(fraction: number | undefined, status: string | undefined): void;
  /** May throw (a checkpoint too big): the caller fails the job with that error. */
  checkpoint(data: string): void;
  output(text: string): void;
};

/** The longest line an app may print (a result or a checkpoint line fits well within it). */
const MAX_LINE_CHARS = 1024 * 1024;

/**
 * An app's stdout, by the recipe protocol (../stdoutProtocol.ts): progress lines, checkpoint lines, output,
 * and the last line is the result, as JSON. A JSON line is held back until the next line shows it was not the
 * last, then streamed as output.
 */
export class AppStdout {
  private readonly lines: LineReader;
  private held: { line: string; value: unknown } | undefined;
  private last: string | undefined;

  constructor(
    private readonly events: AppStdoutEvents,
    maxLineChars = MAX_LINE_CHARS,
  ) {
    this.lines = new LineReader((line) => this.line(line), { maxLineChars, label: "the app" });
  }

  write(bytes: Uint8Array): void {
    this.lines.write(bytes);
  }

  /** The end of stdout: the result, or why there is none. */
  end(): { ok: true; result: unknown } | { ok: false; lastLine: string | undefined } {
    this.lines.end();
    if (this.held === undefined) return { ok: false, lastLine: this.last };
    return { ok: true, result: this.held.value };
  }

  private line(line: string): void {
    this.last = line;
    if (this.held !== undefined) {
      this.events.output(this.held.line + "\n");
      this.held = undefined;
    }
    const seen = classifyLine(line);
    switch (seen.kind) {
      case "text":
        return this.events.output(line + "\n");
      case "progress":
        return this.events.progress(seen.progress, seen.status);
      case "checkpoint":
        return this.events.checkpoint(seen.data);
      case "json":
        this.held = { line, value: seen.value };
    }
  }
}
