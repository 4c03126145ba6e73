// Process helpers for the runners: run a root npm script quietly, and clean up when interrupted.
import { spawnSync } from "node:child_process";
import { repoDir } from "./paths.mjs";

/** Runs `npm run <script>` in the repo; prints its output only when it fails, then throws. */
export function runNpmScript(script) {
  const result = spawnSync("npm", ["run", "--silent", script], { cwd: repoDir, encoding: "utf8" });
  if (result.status !== 0) {
    process.stderr.write(`${result.stdout ?? ""}${result.stderr ?? ""}`);
    throw new Error(`npm run ${script} failed (exit ${result.status})`);
  }
  return `${result.stdout}${result.stderr}`;
}

/** On Ctrl-C or SIGTERM: run `cleanUp` (stop code-server, close Chromium), then exit. Returns the unregister. */
export function onInterrupt(cleanUp) {
  const handler = (signal) => {
    console.error(`\n${signal}: cleaning up`);
    Promise.resolve(cleanUp()).finally(() => process.exit(130));
  };
  process.once("SIGINT", handler);
  process.once("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}
