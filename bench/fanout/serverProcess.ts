import { spawn, type ChildProcess } from "node:child_process";

export type FunctionStats = { calls: number; conflicts: number; pushes: number };
export type Stats = { functions: Record<string, FunctionStats>; pushes: number; conflictWindowMs: number };
export type Seeded = { url: string; orgId?: string; clientKey?: string; publishKey?: string; workerKeys?: string[]; operatorKey?: string };

/**
 * The loopback test server in its own process (so the bench process measures only its engines), with its
 * instruments: GET /__testserver/stats, POST /__testserver/stats/reset.
 */
export class ServerProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly seeded: Seeded,
  ) {}

  /**
   * `stockScan`: serve with stock convex-test, whose every query walks the whole database (the loopback server
   * otherwise iterates only the queried table). FANOUT_PROF=<folder> writes a CPU profile of each server there.
   */
  static async start(args: string[], options: { stockScan?: boolean } = {}): Promise<ServerProcess> {
    const profile = process.env.FANOUT_PROF ? ["--cpu-prof", "--cpu-prof-dir", process.env.FANOUT_PROF] : [];
    const scan = options.stockScan ? ["--stock-scan"] : [];
    const child = spawn(process.execPath, [...profile, "--import", "tsx", "test/server/cli.ts", "--port", "0", ...scan, ...args], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const seeded = await new Promise<Seeded>((resolve, reject) => {
      let text = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        text += d;
        if (text.includes("\n")) resolve(JSON.parse(text.split("\n")[0]) as Seeded);
      });
      child.on("exit", (code) => reject(new Error(`test server exited with ${code}`)));
    });
    return new ServerProcess(child, seeded);
  }

  get url(): string {
    return this.seeded.url;
  }

  async stats(): Promise<Stats> {
    const res = await fetch(`${this.url}/__testserver/stats`);
    if (!res.ok) throw new Error(`GET /__testserver/stats answered ${res.status}`);
    return (await res.json()) as Stats;
  }

  async resetStats(): Promise<Stats> {
    const res = await fetch(`${this.url}/__testserver/stats/reset`, { method: "POST" });
    if (!res.ok) throw new Error(`POST /__testserver/stats/reset answered ${res.status}`);
    return (await res.json()) as Stats;
  }

  close(): void {
    this.child.kill("SIGTERM");
  }
}

/** Executions and pushes in a stats answer, leaving out some functions (the submitter's own calls, the views). */
export function totals(stats: Stats, leaveOut: (name: string) => boolean = () => false) {
  let calls = 0;
  let pushes = 0;
  let conflicts = 0;
  for (const [name, f] of Object.entries(stats.functions)) {
    if (leaveOut(name)) continue;
    calls += f.calls;
    pushes += f.pushes;
    conflicts += f.conflicts;
  }
  return { calls, pushes, conflicts };
}
