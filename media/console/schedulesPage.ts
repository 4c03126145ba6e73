import type { ConsoleSchedules, ConsoleState } from "../../extension/protocol/consoleProtocol";
import { cronInWords } from "./cronWords";
import { button, el, linkButton, post, scrolling, table } from "./dom";

const HOWTO = `import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";

await new ConvexHttpClient(FARM_URL).mutation(anyApi.schedules.create, {
  clientKey: process.env.FARMHAND_CLIENT_KEY,
  name: "nightly",
  cron: "0 2 * * *",          // 02:00 every day
  timezone: "Europe/Paris",   // default UTC
  overlap: "skip",            // skip a tick while the last run's job runs
  job: { type: "demo.echo", payload: {} },
});`;

/** "Nov 27, 2:00 AM" (with the year when it is not this one): in this machine's time zone and locale. */
function shortWhen(ms: number): string {
  const at = new Date(ms);
  const year = at.getFullYear() === new Date().getFullYear() ? {} : { year: "numeric" as const };
  return at.toLocaleString(undefined, { month: "short", day: "numeric", hour: "numeric", minute: "2-digit", ...year });
}

type Schedule = ConsoleSchedules["schedules"][number];

/** "every day at 09:00 (Europe/Paris)" — the line itself when it has no words here; its tooltip is the line. */
function whenItRuns(s: Schedule): string {
  return `${cronInWords(s.cron) ?? s.cron} (${s.timezone})`;
}

/** The last run: when, and its job (a link to the job's page, with its status); or what was skipped. */
function lastRun(s: Schedule): string | Node {
  if (!s.lastJob) return s.lastRunAt === null ? "not yet" : shortWhen(s.lastRunAt);
  const { jobId, status } = s.lastJob;
  const box = el("span", undefined, { class: "last-run", "data-for": `${jobId}:${status}` });
  const open = () => {
    post({ type: "page", page: "jobs" });
    post({ type: "openJob", jobId });
  };
  box.append(
    `${shortWhen(s.lastRunAt ?? 0)} · `,
    linkButton(jobId.slice(-8), open, { title: `Open job ${jobId}` }),
    " ",
    el("vscode-badge", status, { class: `status-${status}` }),
  );
  return box;
}

/** Why it is paused when the farm paused it, or "active"/"paused". */
function stateOf(s: Schedule): string | Node {
  if (!s.paused) return "active";
  if (!s.pausedReason) return "paused";
  const box = el("span", "paused", { class: "paused-by-farm" });
  box.append(el("div", s.pausedReason, { class: "note paused-reason" }));
  return box;
}

/** The last run, and under it the last tick that could not submit its job (when, code and message). */
function lastRunAndError(s: Schedule): string | Node {
  const run = lastRun(s);
  if (s.lastError === null || s.lastErrorAt === null) return run;
  const box = el("span", undefined, { class: "last-run-and-error" });
  box.append(run, el("div", `Not submitted ${shortWhen(s.lastErrorAt)}: ${s.lastErrorCode ?? "error"}: ${s.lastError}`, { class: "error schedule-error" }));
  return box;
}

/**
 * The Schedules page: every schedule of the org (the first ones by name), live, with its next runs in this
 * machine's time, and Pause/Resume and Remove… (which asks first). An org without schedules is told how to make one.
 */
export function schedulesPage({ schedules }: ConsoleState, parts: Node[]): void {
  if (!schedules) return void parts.push(el("p", "Loading…"));
  if (schedules.schedules.length === 0) {
    parts.push(
      el("p", "No schedules yet. A schedule submits a job at each tick of a cron line (5 fields, in a time zone); make one with the farm's schedules:create and a client key, for example from Node:", {
        id: "no-schedules",
      }),
      el("pre", HOWTO, { id: "schedules-howto" }),
    );
    return;
  }
  const rows = schedules.schedules.map((s) => {
    const actions = el("div", undefined, { class: "row-actions", "data-for": `${s.scheduleId}:${s.paused}:${s.pausedReason !== null}` });
    // paused by the farm (its key was revoked): it cannot run again, only be removed
    if (s.pausedReason === null) {
      actions.append(
        s.paused
          ? button("Resume", () => post({ type: "resumeSchedule", scheduleId: s.scheduleId }), { class: "resume", "data-for": s.scheduleId, "aria-label": `Resume ${s.name}` })
          : button("Pause", () => post({ type: "pauseSchedule", scheduleId: s.scheduleId }), { secondary: "", class: "pause", "data-for": s.scheduleId, "aria-label": `Pause ${s.name}` }),
      );
    }
    actions.append(button("Remove…", () => post({ type: "removeSchedule", scheduleId: s.scheduleId }), { secondary: "", class: "remove", "data-for": s.scheduleId, "aria-label": `Remove ${s.name}` }));
    return [
      s.name,
      s.type,
      whenItRuns(s),
      s.paused ? "paused" : s.nextRuns.length === 0 ? "never again" : s.nextRuns.map(shortWhen).join("\n"),
      s.overlap === "skip" ? "skip while running" : "allow",
      stateOf(s),
      lastRunAndError(s),
      actions,
    ];
  });
  parts.push(
    el("p", `Times in this machine's time zone (${Intl.DateTimeFormat().resolvedOptions().timeZone}); each schedule ticks in its own.`, { class: "label", id: "schedules-zone" }),
    scrolling(
      table(["Name", "Job type", "Runs", "Next runs", "Overlap", "State", "Last run", ""], rows, { id: "schedules" }, [
        "10%", "9%", "14%", "13%", "8%", "6%", "13%", "200px",
      ]),
      "wide",
    ),
  );
  if (schedules.more) parts.push(el("p", "The first schedules by name are shown; the org has more (schedules:list with a client key lists them all).", { class: "note", id: "schedules-more" }));
}
