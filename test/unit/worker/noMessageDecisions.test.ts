import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(__dirname, "../../..");
const FOLDERS = ["extension/worker", "extension/donor", "extension/cli"];

/**
 * Decisions made on an error's or a stop's text instead of its code or kind: a message (or a reason string)
 * matched, searched or compared. Formatting a message for a person is fine; branching on it is not.
 */
const DECISIONS: RegExp[] = [
  /\.message\s*\.\s*(includes|startsWith|endsWith|match|search|indexOf)\s*\(/,
  /(?<!typeof\s+[\w.?]+)\.message\s*[!=]==?/,
  /[!=]==?\s*[\w.]*\.message\b/,
  /\.test\(\s*[\w.?]*(message|reason)\b/,
  /\b(message|reason)\s*\.\s*(includes|startsWith|endsWith|match|search|indexOf)\s*\(/,
];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

export function messageDecisions(files: string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if (line.trim().startsWith("//") || line.trim().startsWith("*")) return;
        if (DECISIONS.some((re) => re.test(line))) found.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
      });
  }
  return found;
}

describe("no decision reads message text", () => {
  it("the engine, the session and the CLI branch on codes and kinds, never on an error's or a stop's words", () => {
    const files = FOLDERS.flatMap((f) => sources(join(ROOT, f)));
    expect(files.length).toBeGreaterThan(20);
    expect(messageDecisions(files)).toEqual([]);
  });

  it("finds the kinds of decision it is there to catch", () => {
    const planted = [
      'if (e.message.includes("worker\'s key")) stop();',
      "return /worker.s key/.test(reason);",
      'if (error.message === "gone") return;',
      'const refused = /revoked/.test(err.message);',
    ];
    for (const line of planted) expect(DECISIONS.some((re) => re.test(line)), line).toBe(true);
    const formatting = ['log(`error: ${e.message}`);', 'return typeof data.message === "string" ? data.message : undefined;', "this.emit(\"error\", { message: `${what} failed: ${errorMessage(e)}` });"];
    for (const line of formatting) expect(DECISIONS.some((re) => re.test(line)), line).toBe(false);
  });
});
