import { parseArgs } from "node:util";
import { FarmhandClient, type ScheduleView } from "../sdk/client";
import type { SchedulePaused, ScheduleRemoved, ScheduleResumed, ScheduleSpec } from "../sdk/schedules";
import { errorCode } from "../worker/errors";
import { connectionOf, parseJson, reportFailure, SUBMITTER_EXIT, UsageError, type Connection, type SubmitterIo } from "./submitter";

/**
 * `farmhand schedule create | list | pause | resume | remove`: schedules (a job submitted at each tick of a cron
 * line) over farmhand/client. Exit codes as submit's: 0 done, 1 failed (an unknown schedule, a refused key), 2 usage
 * (a bad flag, and what the server refuses as invalid_argument or too_large: a bad cron line, time zone or job, a name
 * in use, a payload over the cap).
 */
const SCHEDULE_USAGE = `Usage: farmhand schedule create --name <N> --cron "<m h dom mon dow>" (--type <T> [--payload <JSON>] | --job <JSON>)
                                [--timezone <TZ>] [--overlap skip|allow]
       farmhand schedule list [--json]
       farmhand schedule pause | resume | remove <name or id>

  create        Submit a job of type T (payload --payload, default null) at each tick of a 5-field cron line, in
                --timezone (an IANA name, default UTC). --overlap skip (the default) skips a tick while the last
                run's job has not ended; allow submits anyway. Prints the schedule's id; its next run on stderr.
                --job gives the whole job spec instead, as jobs:submit takes it (e.g. '{"type":"render",
                "payload":{…},"priority":5,"maxAttempts":3}').
  list          The org's schedules by name: cron line, time zone, state (and why the farm paused it), next run
                (in its time zone), last run's job and status, and the last tick that could not submit its job.
                --json: one JSON line per schedule, as schedules:list answers it.
  pause         Stop a schedule's ticks until it is resumed.
  resume        Start its ticks again, counted from now (ticks missed while paused do not run).
  remove        Delete a schedule; the jobs it submitted stay.
                A schedule is named by its name, or by its id (as create and list --json print it).

  --json        Print the server's answer as JSON (every command)
  --url <url>   The deployment; default FARMHAND_URL, then the client key file's url
  Client key:   FARMHAND_CLIENT_KEY, else the client key file (~/.config/farmhand/client.json, mode 0600); an
                operator key (fh_o_…) manages the org's schedules too
  Exit codes:   0 done, 1 failed (no such schedule, a refused key), 2 usage (a bad flag, cron line, time zone or job)`;

const ACTIONS = ["create", "list", "pause", "resume", "remove"] as const;
type Action = (typeof ACTIONS)[number];

type Values = { name?: string; cron?: string; timezone?: string; overlap?: string; type?: string; payload?: string; job?: string; json?: boolean };
type Plan = (client: FarmhandClient) => Promise<number>;
type ActionAnswer = SchedulePaused | ScheduleResumed | ScheduleRemoved;

/** Run `farmhand schedule …`; resolves with the exit code. `connect` opens the client (a test may hand in its own). */
export async function runSchedule(
  argv: string[],
  io: SubmitterIo,
  connect: (connection: Connection) => FarmhandClient = (connection) => new FarmhandClient({ ...connection, log: false }),
): Promise<number> {
  const [action, ...rest] = argv;
  if (action === undefined || action === "-h" || action === "--help" || action === "help") {
    io.out(SCHEDULE_USAGE);
    return action === undefined ? SUBMITTER_EXIT.usage : SUBMITTER_EXIT.ok;
  }
  const label = `farmhand schedule ${action}`;
  let client: FarmhandClient | undefined;
  try {
    if (!(ACTIONS as readonly string[]).includes(action)) throw new UsageError(`unknown command ${JSON.stringify(action)} (create, list, pause, resume, remove)`);
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        url: { type: "string" },
        name: { type: "string" },
        cron: { type: "string" },
        timezone: { type: "string" },
        overlap: { type: "string" },
        type: { type: "string" },
        payload: { type: "string" },
        job: { type: "string" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
    if (values.help) {
      io.out(SCHEDULE_USAGE);
      return SUBMITTER_EXIT.ok;
    }
    const plan = planOf(action as Action, values, positionals, io);
    client = connect(connectionOf(values.url, io.env));
    return await plan(client);
  } catch (e) {
    return reportFailure(e, label, "farmhand schedule --help", io);
  } finally {
    await client?.close();
  }
}

/** A job spec's fields, checked against the server's own type: a field added there fails to compile here. */
const JOB_SPEC_FIELDS = {
  type: true,
  payload: true,
  priority: true,
  requiredCapabilities: true,
  externalId: true,
  maxAttempts: true,
  leaseMs: true,
  delayMs: true,
  runAt: true,
  batchId: true,
  requirements: true,
  dependsOn: true,
  validation: true,
  fairnessKey: true,
  traceparent: true,
  cache: true,
} as const satisfies Record<keyof ScheduleSpec["job"], true>;

/** The job each tick submits: --type and --payload, or a whole job spec with --job (the server checks its values). */
function jobOf(values: Values): ScheduleSpec["job"] {
  if (values.job === undefined) {
    if (!values.type) throw new UsageError("create needs --type (or --job)");
    return { type: values.type, payload: parseJson(values.payload ?? "null", "--payload") };
  }
  if (values.type !== undefined || values.payload !== undefined) throw new UsageError("give --job, or --type and --payload, not both");
  const job = parseJson(values.job, "--job");
  if (typeof job !== "object" || job === null || Array.isArray(job) || typeof (job as { type?: unknown }).type !== "string") {
    throw new UsageError('--job must be a JSON object with a "type" (a job spec, as jobs:submit takes it)');
  }
  const unknown = Object.keys(job).filter((field) => !Object.hasOwn(JOB_SPEC_FIELDS, field));
  if (unknown.length > 0) throw new UsageError(`--job has ${unknown.map((f) => JSON.stringify(f)).join(", ")}, which a job spec has not (it takes ${Object.keys(JOB_SPEC_FIELDS).join(", ")})`);
  return job as ScheduleSpec["job"];
}

function planOf(action: Action, values: Values, positionals: string[], io: SubmitterIo): Plan {
  if (action === "create") {
    if (positionals.length > 0) throw new UsageError(`create takes no positional arguments (got ${positionals[0]})`);
    for (const flag of ["name", "cron"] as const) if (!values[flag]) throw new UsageError(`create needs --${flag}`);
    const overlap = values.overlap;
    if (overlap !== undefined && overlap !== "skip" && overlap !== "allow") throw new UsageError(`--overlap must be skip or allow, got ${overlap}`);
    const job = jobOf(values);
    return async (client) => {
      const created = await client.schedules.create({
        name: values.name!,
        cron: values.cron!,
        ...(values.timezone !== undefined ? { timezone: values.timezone } : {}),
        ...(overlap !== undefined ? { overlap } : {}),
        job,
      });
      if (values.json) {
        io.out(JSON.stringify(created));
      } else {
        io.out(created.scheduleId);
        io.err(created.nextRunAt === null ? "no next run: the line never fires again" : `next run ${timeIn(created.nextRunAt, values.timezone ?? "UTC")} ${values.timezone ?? "UTC"}`);
      }
      return SUBMITTER_EXIT.ok;
    };
  }
  if (action === "list") {
    if (positionals.length > 0) throw new UsageError(`list takes no positional arguments (got ${positionals[0]})`);
    return async (client) => {
      const schedules = await client.schedules.list();
      if (values.json) for (const schedule of schedules) io.out(JSON.stringify(schedule));
      else if (schedules.length === 0) io.out("No schedules.");
      else for (const line of scheduleTable(schedules)) io.out(line);
      return SUBMITTER_EXIT.ok;
    };
  }
  if (positionals.length !== 1) throw new UsageError(`${action} takes one schedule name or id`);
  const nameOrId = positionals[0];
  return async (client) => {
    const { name, answer } = await byNameOrId(client, nameOrId, (n): Promise<ActionAnswer> => client.schedules[action](n));
    if (values.json) io.out(JSON.stringify({ name, ...answer }));
    else if (action === "pause") io.out(`paused ${name}`);
    else if (action === "remove") io.out(`removed ${name}`);
    else {
      const nextRunAt = "nextRunAt" in answer ? answer.nextRunAt : null;
      const timezone = nextRunAt === null ? "" : ((await client.schedules.list()).find((s) => s.name === name)?.timezone ?? "UTC");
      io.out(`resumed ${name}${nextRunAt === null ? "" : `; next run ${timeIn(nextRunAt, timezone)} ${timezone}`}`);
    }
    return SUBMITTER_EXIT.ok;
  };
}

/** The server names a schedule by its name; an operator may paste its id instead (list --json, create print it). */
async function byNameOrId<T>(client: FarmhandClient, nameOrId: string, act: (name: string) => Promise<T>): Promise<{ name: string; answer: T }> {
  try {
    return { name: nameOrId, answer: await act(nameOrId) };
  } catch (e) {
    if (errorCode(e) !== "not_found") throw e;
    const match = (await client.schedules.list()).find((s) => s.scheduleId === nameOrId);
    if (!match) throw new Error(`no schedule named ${JSON.stringify(nameOrId)} (nor with that id); farmhand schedule list shows them`);
    return { name: match.name, answer: await act(match.name) };
  }
}

/** A table, one schedule a row: times in the schedule's own time zone. */
export function scheduleTable(schedules: readonly ScheduleView[]): string[] {
  const rows = [
    ["NAME", "TYPE", "CRON", "TIMEZONE", "STATE", "NEXT RUN", "LAST RUN", "LAST ERROR"],
    ...schedules.map((s) => [
      s.name,
      s.type,
      s.cron,
      s.timezone,
      s.paused ? (s.pausedReason ? `paused: ${s.pausedReason}` : "paused") : "active",
      s.nextRuns.length > 0 ? timeIn(s.nextRuns[0], s.timezone) : "-",
      lastRunOf(s),
      lastErrorOf(s),
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join("  ").trimEnd());
}

function lastRunOf(s: ScheduleView): string {
  if (s.lastRunAt === null) return "-";
  const when = timeIn(s.lastRunAt, s.timezone);
  // no job: its submission was refused at the tick, or retention has deleted it since
  return s.lastJob ? `${when} ${s.lastJob.jobId} ${s.lastJob.status}` : `${when} (no job)`;
}

/** The last tick that could not submit its job: when, the refusal's code and message (cut short); "-" for none. */
function lastErrorOf(s: ScheduleView): string {
  if (s.lastError === null || s.lastErrorAt === null) return "-";
  const text = `${timeIn(s.lastErrorAt, s.timezone)} ${s.lastErrorCode ?? "error"}: ${s.lastError}`;
  return text.length > LAST_ERROR_CHARS ? `${text.slice(0, LAST_ERROR_CHARS - 1)}…` : text;
}
const LAST_ERROR_CHARS = 100;

/** "2026-11-28 02:00" as the clock reads in `timeZone`. */
export function timeIn(ms: number, timeZone: string): string {
  const format = new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  const part = Object.fromEntries(format.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}`;
}
