import { describe, expect, it } from "vitest";
import { classifyLine, LineReader, parseJsonLine, type LineReaderOptions } from "../../../extension/handlers/stdoutProtocol";

describe("parseJsonLine", () => {
  it("parses a line that is JSON, surrounding spaces and all", () => {
    expect(parseJsonLine('  {"a": [1, 2]}  ')).toEqual({ a: [1, 2] });
    expect(parseJsonLine("[]")).toEqual([]);
    expect(parseJsonLine('"text"')).toBe("text");
    expect(parseJsonLine("42")).toBe(42);
    expect(parseJsonLine("-0.5")).toBe(-0.5);
    expect(parseJsonLine("true")).toBe(true);
    expect(parseJsonLine("false")).toBe(false);
    expect(parseJsonLine("null")).toBeNull();
  });

  it("says undefined for text, even text that starts like JSON", () => {
    for (const line of ["done!", "3 apples", "{not json}", '{"a": 1', "[1,", "truely", "nullable", "", "   "]) {
      expect(parseJsonLine(line), line).toBeUndefined();
    }
  });
});

describe("classifyLine", () => {
  it("knows progress lines: progress (a number) and/or status (text), nothing else", () => {
    expect(classifyLine('{"progress": 0.5, "status": "halfway"}')).toEqual({ kind: "progress", progress: 0.5, status: "halfway" });
    expect(classifyLine('{"progress": 1}')).toEqual({ kind: "progress", progress: 1, status: undefined });
    expect(classifyLine('{"status": "loading"}')).toEqual({ kind: "progress", progress: undefined, status: "loading" });
  });

  it("knows checkpoint lines: exactly one field, checkpoint, a string", () => {
    expect(classifyLine('{"checkpoint": "AAEC"}')).toEqual({ kind: "checkpoint", data: "AAEC" });
  });

  it("takes other JSON as plain JSON (a result if it comes last), near misses included", () => {
    for (const [line, value] of [
      ['{"progress": "half"}', { progress: "half" }],
      ['{"progress": 0.5, "extra": 1}', { progress: 0.5, extra: 1 }],
      ['{"status": 3}', { status: 3 }],
      ["{}", {}],
      ['{"checkpoint": 7}', { checkpoint: 7 }],
      ['{"checkpoint": "AA==", "more": true}', { checkpoint: "AA==", more: true }],
      ['[{"progress": 1}]', [{ progress: 1 }]],
      ["12", 12],
      ["null", null],
    ] as const) {
      expect(classifyLine(line), line).toEqual({ kind: "json", value });
    }
  });

  it("takes everything else as text", () => {
    expect(classifyLine("plain text line")).toEqual({ kind: "text" });
    expect(classifyLine("{broken")).toEqual({ kind: "text" });
  });
});

function reader(options?: LineReaderOptions) {
  const lines: string[] = [];
  const r = new LineReader((line) => lines.push(line), options);
  const write = (s: string) => r.write(new TextEncoder().encode(s));
  return { r, lines, write };
}

describe("LineReader", () => {
  it("hands on each non-blank line without its line ending, however the chunks fall", () => {
    const { r, lines, write } = reader();
    write("first\r\nsec");
    expect(lines).toEqual(["first"]);
    write("ond\n\n   \n\r\nthird");
    expect(lines).toEqual(["first", "second"]);
    r.end();
    expect(lines).toEqual(["first", "second", "third"]);
  });

  it("joins a UTF-8 character split across chunks", () => {
    const { r, lines } = reader();
    const bytes = new TextEncoder().encode("naïve ✓\n");
    for (const byte of bytes) r.write(Uint8Array.of(byte));
    r.end();
    expect(lines).toEqual(["naïve ✓"]);
  });

  it("ends with nothing more when stdout ended on a newline or said nothing", () => {
    const { r, lines, write } = reader();
    write("only\n");
    r.end();
    r.end();
    expect(lines).toEqual(["only"]);
    const silent = reader();
    silent.r.end();
    expect(silent.lines).toEqual([]);
  });

  it("refuses a line longer than the limit, naming who printed it, even before its newline arrives", () => {
    const whole = reader({ maxLineChars: 10, label: "the app" });
    whole.write("0123456789\n");
    expect(whole.lines).toEqual(["0123456789"]);
    expect(() => whole.write("01234567890\n")).toThrow("the app printed a line longer than 10 characters");
    const endless = reader({ maxLineChars: 10 });
    let error: unknown;
    try {
      endless.write("x".repeat(11));
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ message: "the program printed a line longer than 10 characters", retryable: false });
    // a last line without a newline is held to the limit too
    const last = reader({ maxLineChars: 10 });
    last.write("x".repeat(10));
    last.r.end();
    expect(last.lines).toEqual(["x".repeat(10)]);
  });

  it("has no limit unless given one", () => {
    const { r, lines, write } = reader();
    write("y".repeat(2 * 1024 * 1024));
    r.end();
    expect(lines[0]).toHaveLength(2 * 1024 * 1024);
  });
});
