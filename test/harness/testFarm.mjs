// The project's loopback Convex test server (test/server/cli.ts, the real convex/ functions through convex-test),
// seeded with an org and one enrolled worker: a farm the extension under test can join.
import { join } from "node:path";
import { repoDir } from "./paths.mjs";
import { forEachLine, spawnProcessGroup } from "./process.mjs";

/** Starts the test server; resolves with `{ url, workerKey, stop }` once it has printed its seeded farm. */
export async function startTestFarm({ timeoutMs = 30_000 } = {}) {
  const { child, stop } = spawnProcessGroup(process.execPath, ["--import", "tsx", join(repoDir, "test", "server", "cli.ts"), "--seed", "1"], {
    cwd: repoDir,
  });
  const errors = [];
  forEachLine(child.stderr, (line) => errors.push(line));
  try {
    const farm = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the test server printed no farm within ${timeoutMs} ms`)), timeoutMs);
      forEachLine(child.stdout, (line) => {
        if (!line.startsWith("{")) return;
        clearTimeout(timer);
        try {
          resolve(JSON.parse(line));
        } catch {
          reject(new Error(`the test server printed an unreadable farm: ${line}`));
        }
      });
      child.on("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`the test server exited (code ${code}): ${errors.join("\n")}`));
      });
    });
    if (typeof farm.url !== "string" || typeof farm.workerKeys?.[0] !== "string") {
      throw new Error(`the test server's farm has no url or worker key: ${JSON.stringify(farm)}`);
    }
    return { url: farm.url, workerKey: farm.workerKeys[0], stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
