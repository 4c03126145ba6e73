// Process helpers for the runners: run a root npm script quietly, and clean up when interrupted.
import { spawn, spawnSync } from "node:child_process";
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

/** Process groups still running: killed if this process exits first (an error, Ctrl-C mid-start). */
const killOnExit = new Set();
process.on("exit", () => {
  for (const pid of killOnExit) signalGroup(pid, "SIGKILL");
});

/**
 * Spawns `command` as the leader of its own process group (stdout and stderr piped); `stop()` ends the whole group
 * (children such as code-server's extension host included): SIGTERM, then SIGKILL after a grace period.
 */
export function spawnProcessGroup(command, args, options = {}) {
  const child = spawn(command, args, { ...options, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let exited = false;
  child.on("exit", () => (exited = true));
  if (child.pid !== undefined) killOnExit.add(child.pid);
  const stop = async () => {
    if (child.pid === undefined) return;
    signalGroup(child.pid, "SIGTERM");
    const deadline = Date.now() + 5_000;
    while (!exited && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    // The group may outlive its leader (an extension host shutting down): make sure nothing stays behind.
    signalGroup(child.pid, "SIGKILL");
    killOnExit.delete(child.pid);
  };
  return { child, stop };
}

/** Calls `onLine` for each line the stream prints. */
export function forEachLine(stream, onLine) {
  let pending = "";
  stream.on("data", (chunk) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop();
    for (const line of lines) onLine(line);
  });
}

function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
