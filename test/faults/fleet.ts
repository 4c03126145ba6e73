import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnCli, waitForLine, type CliRun } from "../engine/cliProcess";

export const SLOTS_PER_WORKER = 4;

/** Which capabilities each of the 8 workers advertises: demo.primes and recipe.flaky only on some. */
export const WORKER_CAPABILITIES: string[][] = [
  ["demo.echo", "demo.primes"],
  ["demo.echo", "demo.primes"],
  ["demo.echo", "demo.primes", "recipe.flaky"],
  ["demo.echo", "demo.primes", "recipe.flaky"],
  ["demo.echo", "demo.primes", "recipe.flaky"],
  ["demo.echo", "recipe.flaky"],
  ["demo.echo", "recipe.flaky"],
  ["demo.echo", "recipe.flaky"],
];

export type Member = {
  index: number;
  workerId: string;
  apiKey: string;
  /** Every process this worker key has had, the current one last. */
  runs: CliRun[];
  revoked: boolean;
  /** Between a kill and its replacement. */
  down: boolean;
};

/** Write the recipes file that offers recipe.flaky (test/faults/flakyRecipe.cjs), counting attempts in `dir`. */
export function writeRecipesFile(dir: string): string {
  const file = join(dir, "recipes.json");
  const recipe = { command: process.execPath, args: [join(__dirname, "flakyRecipe.cjs")], env: { FARMHAND_FAULTS_DIR: dir } };
  writeFileSync(file, JSON.stringify({ flaky: recipe }));
  return file;
}

/** Eight real `farmhand-worker` processes, killed and replaced at will; every process is tracked for cleanup. */
export class CliFleet {
  readonly members: Member[];
  /** Set by killAll: a replacement still waiting to start must not outlive the test. */
  private closed = false;
  /** Processes the test itself ended (killed or terminated). */
  private readonly ended = new Set<CliRun>();

  constructor(
    private readonly url: string,
    workers: Array<{ workerId: string; apiKey: string }>,
    private readonly recipesFile: string,
  ) {
    this.members = workers.map((w, index) => ({ index, ...w, runs: [], revoked: false, down: true }));
  }

  private argsFor(member: Member): string[] {
    const capabilities = WORKER_CAPABILITIES[member.index];
    const args = ["--url", this.url, "--key", member.apiKey, "--concurrency", String(SLOTS_PER_WORKER)];
    args.push("--capabilities", capabilities.join(","));
    if (capabilities.includes("recipe.flaky")) args.push("--recipes", this.recipesFile);
    return args;
  }

  current(member: Member): CliRun | undefined {
    return member.runs.at(-1);
  }

  /** Start (or restart) a worker's process and wait until it works. */
  async start(member: Member, timeoutMs = 30_000): Promise<void> {
    if (this.closed) throw new Error(`worker ${member.index + 1} not started: the fleet is shut down`);
    const run = spawnCli(this.argsFor(member));
    member.runs.push(run);
    await waitForLine(run, /working on/, timeoutMs);
    member.down = false;
  }

  /** SIGKILL the worker's process (no goodbye: its leases must expire on the server). */
  async kill(member: Member): Promise<void> {
    const run = this.current(member);
    member.down = true;
    if (!run || run.child.exitCode !== null || run.child.signalCode !== null) return;
    this.ended.add(run);
    run.child.kill("SIGKILL");
    await run.exited;
  }

  /** SIGUSR1: the worker freezes its running jobs (SIGSTOP to their process groups) and takes nothing new. */
  async suspend(member: Member): Promise<void> {
    const run = this.current(member);
    if (!run || run.child.exitCode !== null || run.child.signalCode !== null) return;
    run.child.kill("SIGUSR1");
    await waitForLine(run, /suspending: freezing running jobs/, 10_000);
  }

  /** SIGTERM: the worker stops, gives its running jobs back and exits. */
  async terminate(member: Member): Promise<void> {
    const run = this.current(member);
    member.down = true;
    if (!run || run.child.exitCode !== null || run.child.signalCode !== null) return;
    this.ended.add(run);
    run.child.kill("SIGTERM");
    await run.exited;
  }

  /** Workers that are up and may be hit by a fault. */
  up(): Member[] {
    return this.members.filter((m) => !m.down && !m.revoked);
  }

  allRuns(): CliRun[] {
    return this.members.flatMap((m) => m.runs);
  }

  /** Processes that exited without the test ending them (a revoked worker's exit is expected, and checked apart). */
  unexpectedExits(): string[] {
    return this.members.flatMap((m) =>
      m.runs
        .filter((run) => !this.ended.has(run) && !(m.revoked && run === this.current(m)))
        .filter((run) => run.child.exitCode !== null || run.child.signalCode !== null)
        .map((run) => `worker ${m.index + 1} exited on its own (${run.child.exitCode ?? run.child.signalCode}): ${run.stderr().trim() || run.lines.at(-1)}`),
    );
  }

  /** Kill every process still alive; safe to call twice and after a failed assertion. */
  async killAll(): Promise<void> {
    this.closed = true;
    const alive = this.allRuns().filter((r) => r.child.exitCode === null && r.child.signalCode === null);
    for (const run of alive) run.child.kill("SIGKILL");
    await Promise.all(alive.map((r) => r.exited));
  }
}
