import { spawnSync } from "node:child_process";
import { expect, it } from "vitest";
import { saveFigures } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/harness.bench.ts", "test/harness", "test/host", "test/ui"];

// The code-server layers' cost: a repeated harness install must be near-instant, and the extension-host run plus
// the UI run must stay under three minutes together (they are part of every `npm test`).
it("measures the code-server harness: repeated install, host run, UI run", () => {
  const timed = (script: string) => {
    const started = Date.now();
    const result = spawnSync("npm", ["run", "--silent", script], { encoding: "utf8" });
    expect(result.status, `${script} failed:\n${result.stdout}${result.stderr}`).toBe(0);
    return Math.round((Date.now() - started) / 100) / 10;
  };
  timed("harness:install"); // first call may really install; the figure is the repeated one
  const install = timed("harness:install");
  const host = timed("test:host");
  const ui = timed("test:ui");
  saveFigures("code-server-harness", {
    repeated_install: { value: install, unit: "s", target: "< 2", pass: install < 2 },
    host_run: { value: host, unit: "s" },
    ui_run: { value: ui, unit: "s" },
    host_plus_ui: { value: Math.round((host + ui) * 10) / 10, unit: "s", target: "< 180", pass: host + ui < 180 },
  }, MEASURES);
});
