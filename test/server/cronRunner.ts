// Runs the interval crons of convex/crons.ts on real timers (convex-test does not run crons).
// Hourly, daily, weekly, monthly and cron-expression schedules are not run.
import type { JSONValue } from "convex/values";
import type { FunctionRunner } from "./functions";
import { Origin } from "./instruments/executions";
import type { Instruments } from "./instruments/instruments";

type CronSpec = { name: string; args: JSONValue[]; schedule: { type: string; seconds?: number; minutes?: number; hours?: number } };

export function intervalMs(schedule: CronSpec["schedule"]): number | undefined {
  if (schedule.type !== "interval") return undefined;
  const seconds = (schedule.seconds ?? 0) + (schedule.minutes ?? 0) * 60 + (schedule.hours ?? 0) * 3600;
  return seconds > 0 ? seconds * 1000 : undefined;
}

export class CronRunner {
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly runner: FunctionRunner,
    /** Runs one cron call through the server's call queue and refreshes subscriptions afterwards. */
    private readonly runInQueue: (call: () => Promise<void>) => void,
    private readonly instruments: Instruments,
  ) {}

  async start(): Promise<string[]> {
    const exported = (await this.runner.defaultExport("crons")) as { crons?: Record<string, CronSpec> } | undefined;
    const started: string[] = [];
    for (const [id, spec] of Object.entries(exported?.crons ?? {})) {
      const every = intervalMs(spec.schedule);
      if (every === undefined) continue;
      const timer = setInterval(() => this.runInQueue(() => this.fire(id, spec)), every);
      timer.unref();
      this.timers.push(timer);
      started.push(id);
    }
    return started;
  }

  private async fire(id: string, spec: CronSpec): Promise<void> {
    const kind = await this.runner.kindOf(spec.name);
    // Each firing is its own caller that has seen nothing.
    const origin = new Origin(this.instruments.uniqueCaller(`cron:${id}`), 0);
    const outcome =
      kind === "mutation" || kind === "action"
        ? await this.runner.run(kind, spec.name, spec.args, origin, true)
        : { ok: false as const, errorMessage: `${spec.name} is not a mutation or an action` };
    if (!outcome.ok) console.error(`Cron "${id}" failed: ${outcome.errorMessage}`);
  }

  close(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers.length = 0;
  }
}
