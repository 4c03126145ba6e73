/**
 * The words for a DonorState, shared by every surface (status bar, tree, panel, toasts): each surface picks the
 * length it has room for, and none words the state on its own.
 */
import type { DonorState, Freshness, Headline, LaneRow, PolicyState, PresetSource, ToggleAction, WeekCredit } from "./donorState";
import { ago } from "./format";
import { laneLabel } from "../../convex/contract";

const jobs = (n: number) => `${n} ${n === 1 ? "job" : "jobs"}`;

/** The state in a few words: the status bar's text after "Farmhand: ". */
export function shortStatus(s: Headline): string {
  switch (s.kind) {
    case "notJoined":
      return "join a farm";
    case "revoked":
      return "key refused";
    case "off":
      return "off";
    case "starting":
      return "starting";
    case "waiting":
      return "on";
    case "working":
      return jobs(s.jobs);
    case "draining":
      return `finishing ${jobs(s.jobs)}`;
    case "stopping":
      return "stopping";
    case "paused":
    case "autoPaused":
      return "paused";
    case "suspended":
      return s.cause === "exclusiveApp" ? `suspended — ${s.reason}` : SUSPENDED;
    case "offline":
      return "offline";
    case "stopped":
      return "stopped";
  }
}

/** The state as one sentence (the panel's heading after "Farmhand is ", the tree's "This machine" row, the tooltip). */
export function describeStatus(s: Headline, now: number): string {
  switch (s.kind) {
    case "notJoined":
      return "not joined";
    case "revoked":
      return `stopped: the farm refused this machine's key (${s.problem.code ?? s.problem.kind})`;
    case "off":
      return "off";
    case "starting":
      return "starting: connecting to the farm";
    case "waiting":
      return "on, waiting for work";
    case "working":
      return `working (${jobs(s.jobs)})`;
    case "draining":
      return `finishing ${jobs(s.jobs)}, then off`;
    case "stopping":
      return s.jobs > 0 ? `stopping: giving ${jobs(s.jobs)} back` : "stopping";
    case "paused":
      return `paused: ${s.reason}${s.jobs > 0 ? ` (${jobs(s.jobs)} finishing)` : ""}`;
    case "autoPaused":
      return `paused by Farmhand: ${s.reason}`;
    case "suspended":
      return `suspended: ${s.cause === "exclusiveApp" || s.cause === "tooHot" ? s.reason : "you are using this machine"} (${jobs(s.jobs)} held since ${clock(s.since)})`;
    case "offline":
      return `offline: ${s.problem.message} (since ${clock(s.since)}, ${ago(s.since, now)})`;
    case "stopped":
      return `stopped: ${s.reason}`;
  }
}

const SUSPENDED = "suspended — you are using this machine";

/** The status bar's words after "Farmhand: ": the headline, and that GPU jobs are held when a program holds them. */
export function statusWords(state: Pick<DonorState, "status" | "gpuPause">): string {
  return `${shortStatus(state.status)}${state.gpuPause ? " · GPU paused" : ""}`;
}

/** The state as one sentence with what holds GPU jobs (the tree's "This machine" row, the panel's heading, the tooltip). */
export function statusSentence(state: Pick<DonorState, "status" | "gpuPause" | "at">): string {
  return `${describeStatus(state.status, state.at)}${state.gpuPause ? ` · ${gpuPauseText(state.gpuPause)}` : ""}`;
}

function gpuPauseText(pause: NonNullable<DonorState["gpuPause"]>): string {
  return `GPU jobs paused: ${pause.reason}`;
}

/**
 * While jobs are frozen because the machine's owner is using it: the status text, and what is held (one line per
 * frozen job, for the tooltip). Undefined when nothing is frozen.
 */
export function suspendedText(jobs: ReadonlyArray<{ type: string; suspendedSince?: number }>, now: number): { text: string; held: string[] } | undefined {
  const frozen = jobs.flatMap((j) => (j.suspendedSince === undefined ? [] : [{ type: j.type, since: j.suspendedSince }]));
  if (frozen.length === 0) return undefined;
  return { text: SUSPENDED, held: frozen.map((j) => `${j.type}, frozen ${frozenFor(now - j.since)}`) };
}

/** How long a job has been frozen, in whole minutes (the tree and the panel say since when, too). */
function frozenFor(ms: number): string {
  const minutes = Math.floor(Math.max(0, ms) / 60_000);
  return minutes < 1 ? "just now" : `${minutes} min`;
}

/** A frozen job's note: since when, and for how long (the tree's row, the panel's line). */
/**
 * Why a lane's jobs wait for nobody, or undefined when some online worker can run them: the capabilities (a job
 * type is one) that no online worker offers, else that none offers them all together.
 */
export function laneWaitNote(lane: { servable: boolean; nobodyHandles: readonly string[]; waitCode?: string }): string | undefined {
  if (lane.waitCode === "no_machine_meets") return "no machine meets its requirements";
  if (lane.servable) return undefined;
  if (lane.nobodyHandles.length > 0) return `no online worker handles ${lane.nobodyHandles.join(", ")}`;
  return "no online worker can run these";
}

/**
 * A lane's tooltip: its label, its counts, and why nothing online runs it in the farm's own words (the same sentence
 * its jobs' pages and `farmhand status` give), else the rule when only this view could tell.
 */
export function laneTooltip(lane: LaneRow): string {
  const head = `${laneLabel(lane)}\n${lane.pending} pending · ${lane.running} running`;
  if (lane.waitReason) return `${head}\nWhy it waits: ${lane.waitReason} (${lane.waitCode})`;
  if (!lane.servable) return `${head}\nNo worker that is online now offers every capability these jobs need (a job's type is one: a worker offers the types it has handlers for): they wait until one does.`;
  return head;
}

export function frozenNote(since: number, now: number): string {
  const held = frozenFor(now - since);
  return `frozen since ${clock(since)}${held === "just now" ? "" : ` (${held})`}`;
}

/** What a revoked key means and what to do, in full (the Farm view's message, the panel, the tooltip). */
export function refusedKeyText(problem: { message: string; code?: string }): string {
  return `The farm refused this machine's key${problem.code ? ` (${problem.code})` : ""}: ${problem.message}. Join again with a new token from your operator.`;
}

export const TOGGLE_LABEL: Record<ToggleAction, string> = {
  join: "Join a Farm…",
  rejoin: "Join Again…",
  start: "Start donating",
  stop: "Stop donating",
  stopNow: "Stop Now (give jobs back)",
  resume: "Resume",
};

/** The status bar's tooltip line saying what a click does. */
export const TOGGLE_HINT: Record<ToggleAction, string> = {
  join: "Click to join a farm with an enrollment token from its operator.",
  rejoin: "Click to join again with a new token from your operator.",
  start: "Click to start donating.",
  stop: "Click to stop donating.",
  stopNow: "Click to stop now: the running jobs go back to the queue.",
  resume: "Click to resume: take jobs again.",
};

/**
 * Why the farm's figures are missing or old, in a line; undefined when they are live (or nobody watches).
 * The revoked key says so instead of "cannot reach the farm".
 */
export function farmNotice(freshness: Freshness, now: number): string | undefined {
  switch (freshness.kind) {
    case "notWatched":
    case "live":
      return undefined;
    case "loading":
      return "Loading…";
    case "lastKnown":
      return `Last known as of ${clock(freshness.asOf)} (${ago(freshness.asOf, now)}): cannot reach the farm — ${freshness.why.message}`;
    case "missing":
      return farmProblemText(freshness.why);
  }
}

/** Why the farm's own data (queue, workers, dead letters) cannot be shown, by kind: each reads differently. */
function farmProblemText(problem: { kind: string; message: string; code?: string }): string {
  switch (problem.kind) {
    case "unreachable":
      return `Cannot reach the farm: ${problem.message}`;
    case "refused":
      return refusedKeyText(problem);
    case "notAllowed":
      return `This machine's key may not read the farm: ${problem.message}`;
    default:
      return `The farm answered with an error: ${problem.message}`;
  }
}

/** The toast after joining: what the status bar shows now, and what to do next. */
export function joinedMessage(state: DonorState): string {
  const now = describeStatus(state.status, state.at);
  if (state.toggle === "start") return "Farmhand: joined the farm. Click Farmhand in the status bar to start donating.";
  return `Farmhand: joined the farm; donating is ${now}.`;
}

/** The toast when Finish Current Jobs and Stop is asked for. */
export function finishingMessage(running: number): string {
  return running > 0 ? `Farmhand: finishing ${jobs(running)}, then donating switches off. No new jobs start.` : "Farmhand: no jobs running; donating is off.";
}

/** Dead letter attempts as a person reads them. */
export function attemptsText(d: { attempt: number; maxAttempts: number; gaveUp: "attempts" | "notRetryable" }): string {
  return d.gaveUp === "notRetryable"
    ? `failed on attempt ${d.attempt} of ${d.maxAttempts} with an error not worth retrying`
    : `all ${d.maxAttempts} ${d.maxAttempts === 1 ? "attempt" : "attempts"} failed`;
}

/** A local wall-clock time, hours and minutes. */
function clock(ms: number): string {
  const d = new Date(ms);
  return `${d.getHours()}:${String(d.getMinutes()).padStart(2, "0")}`;
}

const PRESET_FROM: Record<PresetSource, string> = {
  default: "the default",
  user: "from User settings",
  remote: "from Remote settings",
  workspaceIgnored: "the default: the workspace's value does not count for a machine setting",
};

/** The policy in one line, with where the preset comes from and what this machine really runs at once (the farm's grant may be lower). */
export function policyText(p: PolicyState): string {
  const idle = p.idleMinutes > 0 ? `after ${p.idleMinutes} idle min` : "while you work";
  const limit = p.farmAllows !== undefined && p.farmAllows < p.concurrency ? ` (the farm allows ${p.farmAllows})` : "";
  return `${p.preset} preset${p.presetFrom ? ` (${PRESET_FROM[p.presetFrom]})` : ""} · up to ${jobs(p.runsUpTo)} at once${limit} · ${idle} · pauses above ${p.otherCpuPercent} % CPU from other programs${p.donateOnBattery ? "" : " · not on battery"}${p.sensing ? ` · ${p.sensing}` : ""}`;
}

/** Whether this machine runs the farm's apps, as the panel says it. */
export function appsText(runsApps: boolean): string {
  return `Runs the farm's apps: ${runsApps ? "yes" : "no"}`;
}

/** The panel's switch for apps: what a click does now. */
export function appsButtonLabel(runsApps: boolean): string {
  return runsApps ? "Stop running apps" : "Allow apps";
}

/** The farm's credit for this machine this week, hours with one decimal, and the energy its jobs used. */
export function creditText(credit: WeekCredit): string {
  const energy = credit.energyKWh === undefined ? "" : `, ${credit.energyBy?.method === "estimated" ? "about " : ""}${kWh(credit.energyKWh)}${energyByText(credit.energyBy)}`;
  return `This machine gave ${cpuHours(credit.cpuHours)} CPU-hours this week, ${jobs(credit.jobs)}${energy}`;
}

/** Energy in kWh with two significant digits; small amounts keep their size visible. */
export function kWh(kwh: number): string {
  if (kwh === 0) return "0 kWh";
  if (kwh < 0.001) return "under 0.001 kWh";
  return `${kwh >= 10 ? Math.round(kwh) : Number(kwh.toPrecision(2))} kWh`;
}

function energyByText(by: WeekCredit["energyBy"]): string {
  if (!by) return "";
  return by.method === "measured" ? ` (measured: ${by.source})` : ` (estimated: CPU time at ${by.source.replace(/^an estimate at /, "")})`;
}

/** Small amounts keep their size visible: a few short jobs are not "0.0". */
function cpuHours(hours: number): string {
  if (hours === 0 || hours >= 0.1) return hours.toFixed(1);
  return hours < 0.005 ? "under 0.01" : hours.toFixed(2);
}

/**
 * A worker's row after its name (the tree and the panel): what the farm knows of its presence, with ages as of
 * `now`: online (with when it last called), stopped (it said so), or last seen.
 */
export function workerText(w: { online: boolean; revoked: boolean; lastSeenAt: number; stoppedAt?: number; maxJobs: number }, now: number): string {
  if (w.revoked) return "revoked";
  if (w.online) return `online · up to ${jobs(w.maxJobs)} · seen ${ago(w.lastSeenAt, now)}`;
  if (w.stoppedAt !== undefined) return `offline · stopped ${ago(w.stoppedAt, now)}`;
  return `offline · last seen ${ago(w.lastSeenAt, now)}`;
}
