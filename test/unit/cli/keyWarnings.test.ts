import { describe, expect, it } from "vitest";
import { runCli, type CliIo } from "../../../extension/cli/main";

function io(env: NodeJS.ProcessEnv) {
  const err: string[] = [];
  const value: CliIo = { env, out: () => undefined, err: (line) => void err.push(line), onSignal: () => () => undefined };
  return { io: value, err };
}

describe("the CLI and its keys", () => {
  it("publish --key warns that the key shows in ps; from FARMHAND_KEY it does not, and forgets the variable", async () => {
    const given = io({});
    // The file does not exist: publishing stops there, after the arguments (and the key) were read.
    expect(await runCli(["publish", "--url", "https://x.convex.cloud", "--name", "a", "--key", "fh_c_k", "/nonexistent/app.wasm"], given.io)).toBe(2);
    expect(given.err[0]).toBe("farmhand-worker publish: warning: a key given with --key is visible to every user of this machine (ps); set FARMHAND_KEY instead");

    const env: NodeJS.ProcessEnv = { FARMHAND_KEY: "fh_c_k", FARMHAND_OPERATOR_KEY: "fh_o_k", PATH: "/bin" };
    const fromEnv = io(env);
    expect(await runCli(["publish", "--url", "https://x.convex.cloud", "--name", "a", "/nonexistent/app.wasm"], fromEnv.io)).toBe(2);
    expect(fromEnv.err.join("\n")).not.toContain("warning");
    expect(env).toEqual({ PATH: "/bin" });
  });

  it("the worker forgets FARMHAND_KEY once its arguments are read, even when they are refused", async () => {
    const env: NodeJS.ProcessEnv = { FARMHAND_KEY: "fh_w_k", PATH: "/bin" };
    expect(await runCli(["--url", "ftp://nope"], io(env).io)).toBe(2);
    expect(env).toEqual({ PATH: "/bin" });
  });
});
