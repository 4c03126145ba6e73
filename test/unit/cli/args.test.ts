import { mkdtempSync, statSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultKeyFile, parseCliArgs } from "../../../extension/cli/args";
import { readKeyFile, writeKeyFile } from "../../../extension/cli/keyFile";
import { runCli, type CliIo } from "../../../extension/cli/main";

describe("farmhand-worker arguments", () => {
  it("parses a full command line", () => {
    expect(
      parseCliArgs(
        ["--url", "https://happy-otter-123.convex.cloud/", "--key", "fh_w_k", "--concurrency", "4", "--capabilities", "demo.echo, demo.primes", "--recipes", "r.json", "--no-ollama", "--job-timeout-ms", "60000"],
        { XDG_CONFIG_HOME: "/cfg" },
      ),
    ).toEqual({
      help: false,
      url: "https://happy-otter-123.convex.cloud",
      key: "fh_w_k",
      keyFrom: "argument",
      token: undefined,
      name: undefined,
      keyFile: "/cfg/farmhand/worker.json",
      concurrency: 4,
      capabilities: ["demo.echo", "demo.primes"],
      recipes: "r.json",
      ollamaUrl: undefined,
      ollama: false,
      apps: false,
      jobTimeoutMs: 60_000,
      connectTimeoutMs: 15_000,
    });
  });

  it.each([
    [[], "--url is required"],
    [["--url", "nope"], "--url is not a URL: nope"],
    [["--url", "ws://x"], "--url must start with http:// or https://, got ws://x"],
    [["--url", "http://x", "--key", "a", "--token", "b", "--name", "n"], "give --key or --token, not both"],
    [["--url", "http://x", "--token", "b"], "--token needs --name"],
    [["--url", "http://x", "--concurrency", "99"], "--concurrency must be a whole number from 1 to 32, got 99"],
    [["--url", "http://x", "--concurrency", "1.5"], "--concurrency must be a whole number from 1 to 32, got 1.5"],
    [["--url", "http://x", "--capabilities", " , "], "--capabilities needs at least one name"],
    [["--url", "http://x", "--bogus"], "Unknown option '--bogus'"],
    [["--url", "http://x", "--max-failures", "2.5"], "--max-failures must be a whole number from 0"],
  ])("rejects %j", (argv, message) => {
    expect(() => parseCliArgs(argv, {})).toThrow(message);
  });

  it("takes --suspend-limit-minutes as milliseconds, and refuses what is not whole minutes up to a day", () => {
    expect(parseCliArgs(["--url", "http://x", "--key", "k", "--suspend-limit-minutes", "3"], {}).suspendLimitMs).toBe(180_000);
    expect(parseCliArgs(["--url", "http://x", "--key", "k"], {}).suspendLimitMs).toBeUndefined();
    expect(() => parseCliArgs(["--url", "http://x", "--suspend-limit-minutes", "1.5"], {})).toThrow("--suspend-limit-minutes must be a whole number from 0 to 1440, got 1.5");
    expect(() => parseCliArgs(["--url", "http://x", "--suspend-limit-minutes", "2000"], {})).toThrow("--suspend-limit-minutes must be a whole number");
  });

  it("takes --pause-while-running as a list of program names, and refuses an empty list or a path", () => {
    expect(parseCliArgs(["--url", "http://x", "--key", "k", "--pause-while-running", "steam, obs64.exe,zoom"], {}).pauseWhileRunning).toEqual(["steam", "obs64.exe", "zoom"]);
    expect(parseCliArgs(["--url", "http://x", "--key", "k"], {}).pauseWhileRunning).toBeUndefined();
    expect(() => parseCliArgs(["--url", "http://x", "--key", "k", "--pause-while-running", " , "], {})).toThrow('--pause-while-running: " " is not a program name');
    expect(() => parseCliArgs(["--url", "http://x", "--key", "k", "--pause-while-running", "/usr/bin/steam"], {})).toThrow("is not a program name");
  });

  it("takes --when-idle with or without minutes (default 5), anywhere on the line", () => {
    expect(parseCliArgs(["--url", "http://x", "--key", "k"], {}).whenIdleMs).toBeUndefined();
    expect(parseCliArgs(["--url", "http://x", "--key", "k", "--when-idle"], {}).whenIdleMs).toBe(300_000);
    expect(parseCliArgs(["--when-idle", "--url", "http://x", "--key", "k"], {}).whenIdleMs).toBe(300_000);
    expect(parseCliArgs(["--url", "http://x", "--key", "k", "--when-idle", "12"], {}).whenIdleMs).toBe(720_000);
    expect(parseCliArgs(["--url", "http://x", "--key", "k", "--when-idle=0"], {}).whenIdleMs).toBe(0);
    expect(() => parseCliArgs(["--url", "http://x", "--when-idle", "2.5"], {})).toThrow("--when-idle must be a whole number from 0 to 1440, got 2.5");
    expect(() => parseCliArgs(["--url", "http://x", "--when-idle", "soon"], {})).toThrow(/Unexpected argument 'soon'/);
  });

  it("runs apps only with --apps; --site-url goes with it", () => {
    expect(parseCliArgs(["--url", "http://x", "--key", "k"], {}).apps).toBe(false);
    expect(parseCliArgs(["--url", "http://x", "--key", "k", "--apps"], {})).toMatchObject({ apps: true, siteUrl: undefined });
    expect(parseCliArgs(["--url", "http://x", "--apps", "--site-url", "https://s.example"], {}).siteUrl).toBe("https://s.example");
    expect(() => parseCliArgs(["--url", "http://x", "--site-url", "https://s.example"], {})).toThrow("--site-url is only for --apps");
    expect(() => parseCliArgs(["--url", "http://x", "--apps", "--site-url", "nope"], {})).toThrow("--site-url is not a URL");
  });

  it("takes --max-failures, where 0 means never auto-pause", () => {
    expect(parseCliArgs(["--url", "http://x", "--key", "k", "--max-failures", "0"], {}).maxConsecutiveFailures).toBe(0);
    expect(parseCliArgs(["--url", "http://x", "--key", "k", "--max-failures", "3"], {}).maxConsecutiveFailures).toBe(3);
    expect(parseCliArgs(["--url", "http://x", "--key", "k"], {}).maxConsecutiveFailures).toBeUndefined();
  });

  it("takes the key from FARMHAND_KEY, unless --key or --token says otherwise", () => {
    const env = { FARMHAND_KEY: " fh_w_env " };
    expect(parseCliArgs(["--url", "http://x"], env)).toMatchObject({ key: "fh_w_env", keyFrom: "environment" });
    expect(parseCliArgs(["--url", "http://x", "--key", "fh_w_arg"], env)).toMatchObject({ key: "fh_w_arg", keyFrom: "argument" });
    expect(parseCliArgs(["--url", "http://x", "--token", "fh_e_t", "--name", "n"], env)).toMatchObject({ key: undefined, keyFrom: undefined });
    expect(parseCliArgs(["--url", "http://x"], {})).toMatchObject({ key: undefined, keyFrom: undefined });
  });

  it("warns once on stderr that a key on the command line shows in ps, and still uses it", async () => {
    const run = async (argv: string[], env: NodeJS.ProcessEnv) => {
      const err: string[] = [];
      const io: CliIo = { env, out: () => undefined, err: (l) => err.push(l), onSignal: () => () => undefined };
      // A missing recipes file stops the run right after the arguments are taken.
      const code = await runCli(["--url", "http://127.0.0.1:1", ...argv, "--recipes", "/no/such/recipes.json"], io);
      return { code, err };
    };
    const onCommandLine = await run(["--key", "fh_w_arg"], {});
    expect(onCommandLine.code).toBe(2);
    expect(onCommandLine.err.filter((l) => /visible to every user of this machine \(ps\)/.test(l))).toHaveLength(1);
    expect(onCommandLine.err[0]).toMatch(/^farmhand-worker: warning: .*set FARMHAND_KEY or use --key-file instead$/);
    const fromEnvironment = await run([], { FARMHAND_KEY: "fh_w_env" });
    expect(fromEnvironment.err.join("\n")).not.toMatch(/warning/);
  });

  it("defaults the key file under ~/.config", () => {
    expect(defaultKeyFile({ XDG_CONFIG_HOME: "" })).toMatch(/\.config\/farmhand\/worker\.json$/);
  });

  it("prints usage for --help and a hint for bad arguments", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { env: {}, out: (l) => out.push(l), err: (l) => err.push(l), onSignal: () => () => undefined };
    expect(await runCli(["--help"], io)).toBe(0);
    expect(out[0]).toMatch(/^Usage: farmhand-worker/);
    expect(await runCli(["--concurrency", "0"], io)).toBe(2);
    expect(err[0]).toBe("farmhand-worker: --url is required\nRun farmhand-worker --help for usage.");
    expect(await runCli(["--url", "http://127.0.0.1:1", "--recipes", "/no/such/recipes.json"], io)).toBe(2);
    expect(err[1]).toMatch(/^farmhand-worker: cannot read recipes file \/no\/such\/recipes.json/);
  });
});

describe("the key file", () => {
  const dir = mkdtempSync(join(tmpdir(), "farmhand-key-"));

  it("is written with 0600 in a 0700 folder and read back", () => {
    const path = join(dir, "nested", "worker.json");
    const key = { url: "http://x", apiKey: "fh_w_abc", workerId: "w1", name: "box" };
    writeKeyFile(path, key);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "nested")).mode & 0o777).toBe(0o700);
    expect(readKeyFile(path)).toEqual(key);
  });

  it("is missing → undefined; readable by others, broken or incomplete → a clear error", () => {
    expect(readKeyFile(join(dir, "none.json"))).toBeUndefined();
    const open = join(dir, "open.json");
    writeFileSync(open, JSON.stringify({ url: "u", apiKey: "k" }));
    chmodSync(open, 0o644);
    expect(() => readKeyFile(open)).toThrow(`key file ${open} is readable by other users; run: chmod 600 ${open}`);
    const broken = join(dir, "broken.json");
    writeFileSync(broken, "{", { mode: 0o600 });
    expect(() => readKeyFile(broken)).toThrow("is not valid JSON");
    const partial = join(dir, "partial.json");
    writeFileSync(partial, "{}", { mode: 0o600 });
    expect(() => readKeyFile(partial)).toThrow("has no url and apiKey");
  });
});
