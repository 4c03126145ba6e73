import { describe, expect, it } from "vitest";
import { AppStdout } from "../../../extension/handlers/apps/appStdout";

function parser(maxLine?: number) {
  const seen: string[] = [];
  const stdout = new AppStdout(
    {
      progress: (p, s) => void seen.push(`progress ${p} ${s}`),
      checkpoint: (d) => void seen.push(`checkpoint ${d}`),
      output: (t) => void seen.push(`output ${t}`),
    },
    maxLine,
  );
  const write = (s: string) => stdout.write(new TextEncoder().encode(s));
  return { stdout, seen, write };
}

describe("AppStdout", () => {
  it("sorts lines into progress, checkpoints and output, and keeps the last JSON line as the result", () => {
    const p = parser();
    p.write('{"progress": 0.25, "status": "a quarter"}\nsome text\r\n{"checkpoint": "AAEC"}\n{"partial": 1}\n\n{"final": ');
    p.write("2}\n");
    expect(p.stdout.end()).toEqual({ ok: true, result: { final: 2 } });
    expect(p.seen).toEqual(["progress 0.25 a quarter", "output some text\n", "checkpoint AAEC", 'output {"partial": 1}\n']);
  });

  it("joins a UTF-8 character split across writes", () => {
    const p = parser();
    const bytes = new TextEncoder().encode('{"word": "naïve"}\n');
    const split = bytes.indexOf(0xc3) + 1;
    p.stdout.write(bytes.subarray(0, split));
    p.stdout.write(bytes.subarray(split));
    expect(p.stdout.end()).toEqual({ ok: true, result: { word: "naïve" } });
  });

  it("takes a last line without a newline", () => {
    const p = parser();
    p.write("[1, 2, 3]");
    expect(p.stdout.end()).toEqual({ ok: true, result: [1, 2, 3] });
  });

  it("has no result when the last line is text, progress or a checkpoint, and says what it was", () => {
    for (const last of ["done!", '{"progress": 1}', '{"checkpoint": "AAAA"}']) {
      const p = parser();
      p.write(`{"early": true}\n${last}\n`);
      expect(p.stdout.end()).toEqual({ ok: false, lastLine: last });
    }
    expect(parser().stdout.end()).toEqual({ ok: false, lastLine: undefined });
  });

  it("refuses a line longer than the limit, even before its newline arrives", () => {
    const p = parser(10);
    expect(() => p.write("x".repeat(11))).toThrow("longer than 10 characters");
  });
});
