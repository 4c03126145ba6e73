// farmhand/client's schedules: a job submitted at each tick of a cron line (schedules:* on the server). A schedule
// is named by its name, unique in the org, as the server's functions take it. Types are the server's own.
import type { FunctionArgs, FunctionReturnType } from "convex/server";
import { api } from "../../convex/_generated/api";
import { typed, type Transport, type TypedTransport } from "./transport";

type Functions = typeof api.schedules;
/** What schedules:create takes (without the key): name, cron, timezone?, overlap?, job. */
export type ScheduleSpec = Omit<FunctionArgs<Functions["create"]>, "clientKey">;
/** `{ scheduleId, nextRunAt }` (nextRunAt null when the line never fires again). */
export type ScheduleCreated = FunctionReturnType<Functions["create"]>;
/** One schedule as schedules:list answers it: cron, timezone, paused, nextRuns, lastRunAt, lastJob, … */
export type ScheduleView = FunctionReturnType<Functions["list"]>[number];
export type SchedulePaused = FunctionReturnType<Functions["pause"]>;
export type ScheduleResumed = FunctionReturnType<Functions["resume"]>;
export type ScheduleRemoved = FunctionReturnType<Functions["remove"]>;

export class FarmhandSchedules {
  private readonly client: Pick<TypedTransport, "mutation" | "query">;

  constructor(
    client: Pick<Transport, "mutation" | "query">,
    private readonly clientKey: string,
  ) {
    this.client = typed(client);
  }

  /** Create a schedule; a bad cron line, time zone or job spec, or a name in use, rejects with the server's invalid_argument. */
  async create(spec: ScheduleSpec): Promise<ScheduleCreated> {
    return await this.client.mutation(api.schedules.create, { ...spec, clientKey: this.clientKey });
  }

  /** The org's schedules, by name. */
  async list(): Promise<ScheduleView[]> {
    return await this.client.query(api.schedules.list, { clientKey: this.clientKey });
  }

  /** Pause by name (no tick runs until resumed); an unknown name rejects with not_found. */
  async pause(name: string): Promise<SchedulePaused> {
    return await this.client.mutation(api.schedules.pause, { clientKey: this.clientKey, name });
  }

  /** Resume by name, counted from now (ticks missed while paused do not run). */
  async resume(name: string): Promise<ScheduleResumed> {
    return await this.client.mutation(api.schedules.resume, { clientKey: this.clientKey, name });
  }

  /** Remove by name; the jobs it submitted stay. */
  async remove(name: string): Promise<ScheduleRemoved> {
    return await this.client.mutation(api.schedules.remove, { clientKey: this.clientKey, name });
  }
}
