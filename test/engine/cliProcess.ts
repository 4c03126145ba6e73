import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const cliEntry = join(__dirname, "..", "..", "extension", "cli", "cli.ts");
const farmhandEntry = join(__dirname, "..", "..", "extension", "cli", "farmhand.ts");

export type CliRun = { child: ChildProcess; lines: string[]; stderr: () => string; exited: Promise<number | null> };

/** Spawn `farmhand-worker` from its TypeScript source (through tsx), collecting its log lines. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}): CliRun {
  // a worker never offers Ollama in tests; `publish` is a command of its own
  const argv = args[0] === "publish" ? args : ["--no-ollama", ...args];
  const child = spawn(process.execPath, ["--import", "tsx", cliEntry, ...argv], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let rest = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (text: string) => {
    rest += text;
    const parts = rest.split("\n");
    rest = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, lines, stderr: () => stderr, exited };
}

export async function waitForLine(run: CliRun, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const line = run.lines.find((l) => pattern.test(l));
    if (line) return line;
    if (Date.now() > deadline || run.child.exitCode !== null) {
      throw new Error(`no line matching ${pattern} (lines: ${JSON.stringify(run.lines)}, stderr: ${run.stderr()})`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** `farmhand …` from its TypeScript source: its exit code and output (stdout as non-blank lines). */
export function runFarmhand(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string[]; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", farmhandEntry, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (t: string) => (out += t));
    child.stderr.setEncoding("utf8").on("data", (t: string) => (err += t));
    child.on("exit", (code) => resolve({ code, out: out.split("\n").filter(Boolean), err }));
  });
}

/** State letter of a process (Linux /proc), or undefined when it is gone. */
export function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

/** The handler runners a CLI process started (they carry its pid on their command line). */
export function runnersOf(cli: CliRun): number[] {
  const pids: number[] = [];
  for (const entry of readdirProc()) {
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      const i = args.indexOf("--farmhand-host");
      if (i >= 0 && Number(args[i + 1]) === cli.child.pid) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function readdirProc(): string[] {
  return readdirSync("/proc").filter((e) => /^\d+$/.test(e));
}
