// The project's loopback Convex test server (the real convex/ functions through convex-test), started by
// testFarmServer.ts: one org, a client key, one enrolled worker and enrollment tokens. A farm the extension under
// test can join, and a client that can submit jobs to it.
import { join } from "node:path";
import { repoDir } from "./paths.mjs";
import { forEachLine, spawnProcessGroup } from "./process.mjs";

/**
 * Starts the test farm; resolves once it has printed itself, with `{ url, workerKey, clientKey, publishKey, operatorKey, tokens, stop }`
 * (`publishKey`: a client key that may publish farm apps; `operatorKey`: an operator key, fh_o_…, for the console).
 * `tokens.join` is a fresh enrollment token (two jobs at once), `tokens.wide` one for eight jobs at once,
 * `tokens.expired` one that has expired.
 * `capabilities` are granted on top of demo.echo and demo.primes (the demo adds its recipe).
 */
export async function startTestFarm({ timeoutMs = 30_000, capabilities = [] } = {}) {
  const args = ["--import", "tsx", join(repoDir, "test", "harness", "testFarmServer.ts"), ...capabilities];
  const { child, stop } = spawnProcessGroup(process.execPath, args, {
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
    const complete = [farm.url, farm.workerKeys?.[0], farm.clientKey, farm.tokens?.join, farm.tokens?.wide, farm.tokens?.expired].every((v) => typeof v === "string");
    if (!complete) throw new Error(`the test farm lacks a url, worker key, client key or token: ${JSON.stringify(farm)}`);
    return { url: farm.url, workerKey: farm.workerKeys[0], clientKey: farm.clientKey, publishKey: farm.publishKey, operatorKey: farm.operatorKey, tokens: farm.tokens, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The variables that hand the farm to the host suite (the runner's environment reaches the extension host). */
export function testFarmEnv(farm) {
  return {
    FARMHAND_TEST_FARM_URL: farm.url,
    FARMHAND_TEST_WORKER_KEY: farm.workerKey,
    FARMHAND_TEST_CLIENT_KEY: farm.clientKey,
    FARMHAND_TEST_JOIN_TOKEN: farm.tokens.join,
    FARMHAND_TEST_EXPIRED_TOKEN: farm.tokens.expired,
    FARMHAND_TEST_WIDE_TOKEN: farm.tokens.wide,
    FARMHAND_TEST_LEAVE_TOKEN: farm.tokens.leave,
    FARMHAND_TEST_OPERATOR_TOKEN: farm.tokens.operator,
    FARMHAND_TEST_PUBLISH_KEY: farm.publishKey,
    FARMHAND_TEST_OPERATOR_KEY: farm.operatorKey,
  };
}
