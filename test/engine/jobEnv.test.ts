// What a recipe sees of the donor's environment, run by a real `farmhand-worker` started with its key and other
// secrets in its environment: only the allow-list (handlers/jobEnv.ts) and the recipe's own env. On Linux the
// recipe also reads its parent's (the handler runner's) environment from /proc: the secrets are not there either.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, internal } from "../../convex/_generated/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOB_ENV_NAMES } from "../../extension/handlers/jobEnv";
import { spawnCli, waitForLine } from "./cliProcess";
import { startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";

const SECRETS = {
  GITHUB_TOKEN: "ghp_leaked-github-token",
  AWS_SECRET_ACCESS_KEY: "leaked-aws-secret",
  FARMHAND_OPERATOR_KEY: "fh_o_leaked-operator-key",
  VSCODE_IPC_HOOK: "/tmp/leaked-vscode.sock",
  ELECTRON_RUN_AS_NODE: "1",
  NODE_OPTIONS: "--max-old-space-size=1234",
  // the trace the CLI itself runs in is not the job's: a job gets TRACEPARENT only from its own trace context
  TRACEPARENT: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
  // names that only begin with an allowed one (HOME, PATH, TZ) or look like a locale's
  HOMEBREW_GITHUB_API_TOKEN: "ghp_leaked-homebrew-token",
  PATH_EXTRA: "/leaked/path-extra",
  TZ_SECRET: "leaked-tz-secret",
  LCX_TOKEN: "leaked-lcx-token",
};
/** A locale setting: LC_ names are passed on as a family. */
const LOCALE = { LC_ALL: "C.UTF-8" };

const PRINT_ENV = `
const { readFileSync } = require("node:fs");
let parent = null;
try { parent = readFileSync("/proc/" + process.ppid + "/environ", "utf8").split("\\0").filter(Boolean); } catch {}
console.log(JSON.stringify({ env: process.env, parent }));
`;

describe("the environment a job's processes get", () => {
  let farm: Farm;
  beforeAll(async () => {
    farm = await startFarm(0);
  });
  afterAll(async () => {
    await stopFarm(farm);
  });

  it("a recipe run by a CLI worker started with FARMHAND_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, HOMEBREW_GITHUB_API_TOKEN… sees none of them, and LC_ALL", async () => {
    const dir = mkdtempSync(join(tmpdir(), "farmhand-jobenv-"));
    writeFileSync(join(dir, "printenv.js"), PRINT_ENV);
    writeFileSync(
      join(dir, "recipes.json"),
      JSON.stringify({ printenv: { command: process.execPath, args: [join(dir, "printenv.js")], env: { RECIPE_SETTING: "from the recipe" } } }),
    );
    const { token } = await farm.server.write((t) => t.mutation(internal.admin.createEnrollment, { orgId: farm.seeded.orgId, capabilities: ["recipe.printenv"] }));
    const { apiKey } = await farm.server.write((t) =>
      t.mutation(api.workers.enroll, { token, name: "env-box", machineId: "env-box", capabilities: ["recipe.printenv"] }),
    );
    const cli = spawnCli(["--url", farm.server.url, "--recipes", join(dir, "recipes.json")], { FARMHAND_KEY: apiKey, ...SECRETS, ...LOCALE });
    try {
      await waitForLine(cli, /working on/);
      const [id] = await submit(farm, [{ type: "recipe.printenv", payload: null }]);
      const [job] = await waitForJobs(farm, [id]);
      expect(job.status).toBe("succeeded");
      const { env, parent } = job.result as { env: Record<string, string>; parent: string[] | null };
      const allowed = (name: string) => (JOB_ENV_NAMES as readonly string[]).includes(name) || /^LC_[A-Z]+$/.test(name) || name === "RECIPE_SETTING";
      expect(Object.keys(env).filter((name) => !allowed(name))).toEqual([]);
      expect(env.RECIPE_SETTING).toBe("from the recipe");
      expect(env.PATH).toBe(process.env.PATH);
      expect(env.LC_ALL).toBe("C.UTF-8");
      for (const name of Object.keys(SECRETS)) expect(env).not.toHaveProperty(name);
      const everything = JSON.stringify(env);
      for (const value of [apiKey, ...Object.values(SECRETS).filter((v) => v !== "1")]) expect(everything).not.toContain(value);
      if (process.platform === "linux") {
        // The runner that started the recipe holds none of them either: beyond the allow-list only Node's IPC
        // channel that fork() adds, and ELECTRON_RUN_AS_NODE, which runnerEnvironment keeps to start it under Electron.
        expect(parent).not.toBeNull();
        const names = parent!.map((kv) => kv.slice(0, kv.indexOf("=")));
        const plumbing = ["NODE_CHANNEL_FD", "NODE_CHANNEL_SERIALIZATION_MODE", "ELECTRON_RUN_AS_NODE"];
        expect(names.filter((name) => !allowed(name) && !plumbing.includes(name))).toEqual([]);
        expect(parent!.join("\n")).not.toContain(apiKey);
      }
    } finally {
      cli.child.kill("SIGTERM");
      await cli.exited;
    }
  }, 60_000);
});
