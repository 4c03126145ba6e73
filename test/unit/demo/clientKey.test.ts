import { spawnSync } from "node:child_process";
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSecretFile, secretFilePath, writeSecretFile } from "../../../extension/cli/secretFiles";

const repo = join(__dirname, "..", "..", "..");
const KEY = `fh_c_${"A".repeat(43)}`;

/** `npm start`'s step that prints the client key and keeps it in the client key file, run as the demo runs it. */
function saveClientKey(env: Record<string, string>, url: string) {
  const script = `import(${JSON.stringify(join(repo, "test", "demo", "demo.mjs"))}).then((m) => m.saveClientKey(${JSON.stringify(url)}, ${JSON.stringify(KEY)}))`;
  return spawnSync(process.execPath, ["-e", script], { cwd: repo, encoding: "utf8", env: { ...process.env, ...env } });
}

describe("the demo's client key", () => {
  it("is printed and kept in ~/.config/farmhand/client.json (beside worker.json), readable by this user only", () => {
    const env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "farmhand-demo-key-")) };
    const run = saveClientKey(env, "http://127.0.0.1:3210");
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(`client key (submits jobs): ${KEY}`);
    const path = secretFilePath("client", env);
    expect(path).toBe(join(env.XDG_CONFIG_HOME, "farmhand", "client.json"));
    expect(run.stdout).toContain(`saved in ${path}`);
    expect(readSecretFile(path)).toEqual({ url: "http://127.0.0.1:3210", key: KEY, name: "demo submitter" });
    if (process.platform !== "win32") expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("leaves a client key file of another farm alone (and still prints the demo's key)", () => {
    const env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "farmhand-demo-key-")) };
    const path = secretFilePath("client", env);
    writeSecretFile(path, { url: "https://prod.convex.cloud", key: "fh_c_mine", name: "mine" });
    const run = saveClientKey(env, "http://127.0.0.1:3210");
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(KEY);
    expect(run.stdout).toContain("not saved");
    expect(readSecretFile(path)?.key).toBe("fh_c_mine");
  });
});
