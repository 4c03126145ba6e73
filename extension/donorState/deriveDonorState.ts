/**
 * The one place the donor state is made: a pure function of what the membership, the policy decision, the engine and
 * the farm's data say. Unit-tested without VS Code (test/unit/donorState/deriveDonorState.test.ts).
 */
import type { PauseCause, PolicyDecision } from "../policy/policy";
import type { ConnectionHistory } from "./connectionHistory";
import { jobLabel, type AppLabel } from "../worker/jobLabel";
import { canRunAll, capabilitiesNobodyOffers } from "../../convex/contract";
import type { Contribution, DonorState, WeekCredit, FarmFigures, FarmState, Headline, LaneRow, HeadlineKind, PolicyState, Problem, RunningJob, SettingFix, ToggleAction } from "./donorState";

/** The engine while a worker exists in this window. */
export type EngineFacts = {
  phase: "running" | "paused" | "draining" | "stopping";
  /** Its connection to the farm since it started. */
  connection: ConnectionHistory;
  /** Paused because the policy said so (otherwise the engine paused itself). */
  pausedByPolicy: boolean;
  /** The worker's own reason for its state (why it paused itself). */
  reason?: string;
  jobs: RunningJob[];
  /** Running jobs are held while the donor uses this machine (issue 13), since when. */
  suspendedSince?: number;
};

/**
 * farm:overview as this state needs it (a structural subset of the server's answer). The server reads no clock
 * (issue 18): who is online, the last hour's throughput and this week's credit are derived here, with `now`.
 */
export type OverviewFacts = {
  counts: { pending: number; running: number; succeeded: number; canceled: number; dead: number };
  // servable / nobodyHandles: what the farm found looking at every online worker (absent: not known)
  // requirements: the lane's class of machine; waitCode / waitReason: why nothing online runs it (the farm's words)
  lanes: Array<{
    routingKey: string;
    capabilities: string[];
    pending: number;
    running: number;
    servable?: boolean;
    nobodyHandles?: string[];
    requirements?: LaneRow["requirements"];
    apps?: LaneRow["apps"];
    moreApps?: boolean;
    waitCode?: string;
    waitReason?: string;
  }>;
  workers: Array<{ workerId: string; name: string; isMe: boolean; revoked: boolean; lastSeenAt: number; stoppedAt?: number; maxConcurrentJobs: number; capabilities?: string[] }>;
  throughput: Array<{ minuteStart: number; finished: number }>;
  deadLetters: number;
  deadLetterList: Array<{ jobId: string; type: string; error?: string; attempt: number; maxAttempts: number }>;
  canManage: boolean;
  /** This machine's credit per UTC day of the summary's week, with the energy its jobs used (joules). */
  credit?: { days: Array<{ day: number; cpuHours: number; jobs: number; energyJ?: number }> };
  /** Online = not stopped since, and a call within this window. */
  onlineWindowMs: number;
};

export type FarmFacts = {
  /** Some visible view asks for the farm's figures. */
  watched: boolean;
  overview?: OverviewFacts;
  /** When the overview arrived (this machine's clock). */
  answeredAt?: number;
  /** The subscription's last error (cleared by the next answer). */
  error?: Problem;
  /** The connection the figures come through is down, since when. */
  downSince?: number;
};

export type DonorFacts = {
  now: number;
  joined: boolean;
  farmUrl: string;
  wanted: boolean;
  decision: PolicyDecision;
  /** This window is remote (code-server, SSH, containers): machine-scoped settings live on the Remote tab. */
  remoteWindow: boolean;
  engine?: EngineFacts;
  /** The engine stopped on its own (kept until it starts again); `refusal` when the farm refused the key. */
  stopped?: { reason: string; refusal?: Problem };
  policy: Omit<PolicyState, "farmAllows" | "runsUpTo">;
  contribution: Contribution;
  /** `farmhand.runApps` is on in the user settings. */
  runsApps: boolean;
  /** A program of farmhand.pauseGpuWhileRunning that runs now (GPU jobs are held). */
  gpuProgram?: string;
  /** How this machine's jobs' energy is found: measured (the CPU package's counter) or estimated, and from what. */
  energy?: { method: "measured" | "estimated"; source: string };
  farm: FarmFacts;
};

/** The engine's running jobs as rows: app jobs named by app and pinned version, frozen ones with since when. */
export function jobRows(
  running: ReadonlyArray<{ jobId: string; type: string; app?: AppLabel; attempt: number; progress?: number; status?: string; startedAt: number; suspendedSince?: number }>,
): RunningJob[] {
  return running.map((j) => ({
    jobId: j.jobId,
    type: jobLabel(j.type, j.app),
    attempt: j.attempt,
    ...(j.progress === undefined ? {} : { progress: j.progress }),
    ...(j.status === undefined ? {} : { status: j.status }),
    startedAt: j.startedAt,
    ...(j.suspendedSince === undefined ? {} : { suspendedSince: j.suspendedSince }),
  }));
}

/** An engine that has not connected within this long after starting is offline, not starting. */
export const CONNECT_GRACE_MS = 10_000;

export function deriveDonorState(f: DonorFacts): DonorState {
  const farm = farmState(f);
  const status = headline(f);
  const farmAllows = f.farm.overview?.workers.find((w) => w.isMe)?.maxConcurrentJobs;
  const runsUpTo = farmAllows === undefined ? f.policy.concurrency : Math.min(f.policy.concurrency, farmAllows);
  const jobs = f.engine?.jobs ?? [];
  // A refused key's credit is no longer this machine's to show; otherwise the last answer stands.
  const days = f.joined && status.kind !== "revoked" ? f.farm.overview?.credit?.days : undefined;
  const credit = days && weekCredit(days, f.now, f.energy);
  const gpuPause = f.gpuProgram !== undefined && f.wanted && GPU_PAUSE_SHOWN.has(status.kind) ? gpuPauseOf(f.gpuProgram, f.remoteWindow) : undefined;
  return {
    at: f.now,
    joined: f.joined,
    farmUrl: f.farmUrl,
    wanted: f.wanted,
    donating: f.decision.donate,
    status,
    toggle: toggleAction(f, status),
    actions: {
      snooze: f.wanted && SNOOZABLE.has(status.kind) && !(status.kind === "paused" && status.cause === "snoozed"),
      finish: f.wanted && jobs.length > 0 && FINISHABLE.has(status.kind),
      ...((status.kind === "paused" || status.kind === "suspended") && status.fix ? { fix: status.fix } : gpuPause ? { fix: gpuPause.fix } : {}),
    },
    policy: { ...f.policy, ...(farmAllows === undefined ? {} : { farmAllows }), runsUpTo },
    jobs,
    contribution: f.contribution,
    runsApps: f.runsApps,
    ...(credit ? { credit } : {}),
    ...(gpuPause ? { gpuPause } : {}),
    farm: farm.figures ? { ...farm, figures: withThisMachine(farm.figures, runsUpTo, jobs.length) } : farm,
  };
}

/** A program holds the GPU jobs: said while the engine would otherwise take GPU work (not while it stops or is off). */
const GPU_PAUSE_SHOWN = new Set<HeadlineKind>(["starting", "waiting", "working", "paused", "suspended", "offline", "autoPaused"]);

function gpuPauseOf(program: string, remoteWindow: boolean): NonNullable<DonorState["gpuPause"]> {
  return { reason: `${program} is running`, fix: settingFix("gpuProgram", remoteWindow)! };
}

const SNOOZABLE = new Set<HeadlineKind>(["starting", "waiting", "working", "paused", "offline", "suspended"]);
const FINISHABLE = new Set<HeadlineKind>(["starting", "waiting", "working", "paused", "autoPaused", "offline", "suspended"]);

/**
 * The first that holds wins: not joined, revoked, draining, stopping, off, the policy's pause (suspended or paused),
 * starting or stopped, suspended, auto-paused, offline (or still starting), working or waiting. Auto-paused comes
 * before offline: only the donor's Resume lifts it, while a lost connection comes back on its own.
 */
function headline(f: DonorFacts): Headline {
  if (!f.joined) return { kind: "notJoined" };
  const refusal = f.stopped?.refusal ?? (f.farm.error?.kind === "refused" ? f.farm.error : undefined);
  if (refusal) return { kind: "revoked", problem: refusal };
  const e = f.engine;
  const jobs = e?.jobs.length ?? 0;
  if (e?.phase === "draining") return { kind: "draining", jobs };
  if (e?.phase === "stopping") return { kind: "stopping", jobs };
  if (!f.wanted) return { kind: "off" };
  const d = f.decision;
  if (!d.donate && !("off" in d && d.off)) {
    const fix = settingFix(d.cause, f.remoteWindow);
    // The owner is back and the preset froze the running jobs: held, not finishing (issue 13).
    if (e?.suspendedSince !== undefined) return { kind: "suspended", jobs, since: e.suspendedSince, reason: d.reason, cause: d.cause, ...(fix ? { fix } : {}) };
    return { kind: "paused", jobs, reason: d.reason, cause: d.cause, ...(d.until === undefined ? {} : { until: d.until }), ...(fix ? { fix } : {}) };
  }
  if (!e) return f.stopped ? { kind: "stopped", reason: f.stopped.reason } : { kind: "starting" };
  if (e.suspendedSince !== undefined) return { kind: "suspended", jobs, since: e.suspendedSince };
  if (e.phase === "paused" && !e.pausedByPolicy) return { kind: "autoPaused", jobs, reason: e.reason ?? "paused" };
  const c = e.connection;
  if (c.kind === "down") return { kind: "offline", jobs, since: c.since, problem: offlineProblem(f, true) };
  if (c.kind === "never") {
    if (f.now - c.since >= CONNECT_GRACE_MS) return { kind: "offline", jobs, since: c.since, problem: offlineProblem(f, false) };
    return { kind: "starting" };
  }
  return jobs > 0 ? { kind: "working", jobs } : { kind: "waiting" };
}

function offlineProblem(f: DonorFacts, wasConnected: boolean): Problem {
  if (f.farm.error?.kind === "unreachable") return f.farm.error;
  return { kind: "unreachable", message: wasConnected ? "the connection to the farm was lost" : "could not connect to the farm" };
}

function toggleAction(f: DonorFacts, status: Headline): ToggleAction {
  switch (status.kind) {
    case "notJoined":
      return "join";
    case "revoked":
      return "rejoin";
    case "draining":
      return "stopNow";
    case "autoPaused":
      return "resume";
    default:
      return f.wanted ? "stop" : "start";
  }
}

/** The settings editor's setting that lifts each pause (or, for `gpuProgram`, the hold on GPU jobs), and its button. */
const OPENS: Partial<Record<PauseCause | "gpuProgram", { setting: string; label: string }>> = {
  timeWindowsUnreadable: { setting: "farmhand.timeWindows", label: "Edit Time Windows" },
  outsideTimeWindows: { setting: "farmhand.timeWindows", label: "Edit Time Windows" },
  onBattery: { setting: "farmhand.donateOnBattery", label: "Battery Setting" },
  userActive: { setting: "farmhand.idleMinutes", label: "Idle Minutes Setting" },
  cpuBusy: { setting: "farmhand.otherCpuThresholdPercent", label: "CPU Threshold Setting" },
  lowBattery: { setting: "farmhand.minBatteryPercent", label: "Battery Charge Setting" },
  exclusiveApp: { setting: "farmhand.pauseWhileRunning", label: "Programs That Pause Donating" },
  metered: { setting: "farmhand.meteredLimitMB", label: "Metered Allowance Setting" },
  gpuProgram: { setting: "farmhand.pauseGpuWhileRunning", label: "Programs That Pause GPU Jobs" },
};

/** The setting that lifts a pause, on the tab where it lives (machine-scoped settings: Remote in a remote window). */
function settingFix(cause: PauseCause | "gpuProgram", remoteWindow: boolean): SettingFix | undefined {
  const tab = remoteWindow ? "remote" : "user";
  if (cause === "remoteWindow") return { setting: "farmhand.allowRemoteDonation", label: "Allow Donating from This Remote Window…", how: "ask", tab };
  const opens = OPENS[cause];
  return opens && { ...opens, how: "open", tab };
}

function farmState(f: DonorFacts): FarmState {
  const { overview, error, downSince, answeredAt } = f.farm;
  if (!f.joined) return { freshness: { kind: "notWatched" } };
  if (error && error.kind !== "unreachable") return { freshness: { kind: "missing", why: error } };
  const figures = overview && figuresOf(overview, f.now);
  if (error || downSince !== undefined) {
    const why: Problem = error ?? { kind: "unreachable", message: "the connection to the farm was lost" };
    return figures ? { figures, freshness: { kind: "lastKnown", asOf: downSince ?? answeredAt ?? f.now, why } } : { freshness: { kind: "missing", why } };
  }
  if (!f.farm.watched) return { freshness: { kind: "notWatched" } };
  return figures ? { figures, freshness: { kind: "live" } } : { freshness: { kind: "loading" } };
}

function figuresOf(o: OverviewFacts, now: number): FarmFigures {
  const online = (w: OverviewFacts["workers"][number]) => !w.revoked && w.stoppedAt === undefined && now - w.lastSeenAt <= o.onlineWindowMs;
  const onlineWorkers = o.workers.filter(online);
  // the server's rule (convex/lanes/routing.ts): a worker runs a lane's jobs when it offers every capability of it
  const offers = onlineWorkers.flatMap((w) => (w.capabilities ? [w.capabilities] : []));
  const unknown = onlineWorkers.some((w) => !w.capabilities);
  const servable = (caps: string[]) => unknown || canRunAll(caps, offers);
  const nobodyHandles = (caps: string[]) => (unknown ? [] : capabilitiesNobodyOffers(caps, offers));
  const throughput = perMinute(o.throughput, now);
  return {
    counts: o.counts,
    throughput,
    finishedLastHour: throughput.reduce((sum, n) => sum + n, 0),
    // the farm says so when it knows (it looks at every worker; the list here holds only the first ones)
    lanes: o.lanes.map((l) => ({
      ...l,
      servable: l.servable ?? servable(l.capabilities),
      nobodyHandles: l.nobodyHandles ?? (l.servable === undefined ? nobodyHandles(l.capabilities) : []),
    })),
    workers: o.workers.map((w) => ({
      workerId: w.workerId,
      name: w.name,
      isMe: w.isMe,
      online: online(w),
      revoked: w.revoked,
      lastSeenAt: w.lastSeenAt,
      ...(w.stoppedAt === undefined ? {} : { stoppedAt: w.stoppedAt }),
      maxJobs: w.maxConcurrentJobs,
    })),
    workersOnline: onlineWorkers.length,
    dead: o.deadLetterList.map((d) => ({
      jobId: d.jobId,
      type: d.type,
      ...(d.error === undefined ? {} : { error: d.error }),
      attempt: d.attempt,
      maxAttempts: d.maxAttempts,
      gaveUp: d.attempt < d.maxAttempts ? "notRetryable" : "attempts",
    })),
    deadTotal: o.deadLetters,
    canManage: o.canManage,
  };
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * This machine's credit in the UTC week `now` is in (weeks start Monday; 1970-01-01 was a Thursday), with the energy
 * its jobs used in kWh and how this machine finds it (its own gauge: the farm keeps no label).
 */
function weekCredit(days: ReadonlyArray<{ day: number; cpuHours: number; jobs: number; energyJ?: number }>, now: number, energy: DonorFacts["energy"]): WeekCredit {
  const today = Math.floor(now / DAY_MS);
  const monday = today - ((today + 3) % 7);
  const week = days.filter((d) => d.day >= monday && d.day <= today);
  const joules = week.reduce((s, d) => s + (d.energyJ ?? 0), 0);
  return {
    cpuHours: week.reduce((s, d) => s + d.cpuHours, 0),
    jobs: week.reduce((s, d) => s + d.jobs, 0),
    ...(joules > 0 || energy ? { energyKWh: joules / 3_600_000 } : {}),
    ...(energy ? { energyBy: energy } : {}),
  };
}

/**
 * The farm's figures corrected by what this machine knows first-hand: its own limit, and the jobs it runs now.
 * The summary row lags by up to 5 s (issue 9), so "0 running" while a job runs here would be false; the jobs
 * this machine took count as running, and as no longer pending.
 */
function withThisMachine(figures: FarmFigures, runsUpTo: number, runningHere: number): FarmFigures {
  const unseen = Math.max(0, runningHere - figures.counts.running);
  const counts = { ...figures.counts, running: figures.counts.running + unseen, pending: Math.max(0, figures.counts.pending - unseen) };
  return { ...figures, counts, workers: figures.workers.map((w) => (w.isMe ? { ...w, maxJobs: runsUpTo } : w)) };
}

/** The server sends only the minutes that had finishes; the chart wants all 60, oldest first. */
function perMinute(buckets: ReadonlyArray<{ minuteStart: number; finished: number }>, now: number): number[] {
  const MINUTE = 60_000;
  const current = Math.floor(now / MINUTE);
  const series = new Array<number>(60).fill(0);
  for (const b of buckets) {
    const index = 59 - (current - Math.floor(b.minuteStart / MINUTE));
    if (index >= 0 && index < 60) series[index] += b.finished;
  }
  return series;
}
