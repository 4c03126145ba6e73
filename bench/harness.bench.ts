import { spawnSync } from "node:child_process";
import { expect, it } from "vitest";
import { saveFigures } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/harness.bench.ts", "test/harness", "test/host", "test/ui"];

/** What a repeated `npm run harness:install` says when it finds the harness installed and does nothing. */
const NOTHING_TO_INSTALL = /harness already installed|linked to another checkout's install/;

// The code-server layers' cost, reported: how long the extension-host run and the UI run take (they are part of every
// `npm test`; a timing moves with the machine, so it has no target), and that a repeated harness install does nothing.
it("measures the code-server harness: repeated install, host run, UI run", () => {
  const timed = (script: string) => {
    const started = Date.now();
    const result = spawnSync("npm", ["run", "--silent", script], { encoding: "utf8" });
    expect(result.status, `${script} failed:\n${result.stdout}${result.stderr}`).toBe(0);
    return { seconds: Math.round((Date.now() - started) / 100) / 10, output: `${result.stdout}${result.stderr}` };
  };
  timed("harness:install"); // first call may really install; the figures are the repeated one's
  const install = timed("harness:install");
  const skipped = NOTHING_TO_INSTALL.test(install.output);
  const host = timed("test:host").seconds;
  const ui = timed("test:ui").seconds;
  saveFigures("code-server-harness", {
    repeated_install_did_nothing: { value: skipped ? 1 : 0, unit: "yes = 1 (it found the harness installed and ran no install step)", target: "1", pass: skipped },
    repeated_install: { value: install.seconds, unit: "s" },
    host_run: { value: host, unit: "s" },
    ui_run: { value: ui, unit: "s" },
    host_plus_ui: { value: Math.round((host + ui) * 10) / 10, unit: "s" },
  }, MEASURES);
});
