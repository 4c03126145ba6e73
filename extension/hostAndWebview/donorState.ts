/**
 * The one account of this window's donor that every surface shows: the status bar, the Farm tree, the control
 * panel (this object crosses to the webview as it is) and the toasts. `deriveDonorState` makes it, in one place,
 * from what the membership, the engine, the policy and the farm's data say (`DonorFacts`); a surface only formats
 * it (donorStateText.ts), so two surfaces cannot disagree.
 *
 * Plain data only (it is posted to the webview and exported to tests): no functions, no class instances.
 */
import type { PauseCause, PolicyDecision } from "../policy/policy";
import type { ErrorKind } from "../worker/errors";

export type DonorState = {
  /** When this was derived (the host's clock, ms): ages are shown relative to it. */
  at: number;
  joined: boolean;
  farmUrl: string;
  /** The donor switched donating on (persisted; the policy may still hold it back). */
  wanted: boolean;
  /** The policy lets this window donate right now. */
  donating: boolean;
  /** The one line every surface leads with. */
  status: Headline;
  /** What clicking the status-bar item, the tree's title button or the panel's main button does now. */
  toggle: ToggleAction;
  /** The other things the donor can do now. */
  actions: DonorActions;
  policy: PolicyState;
  /** Jobs running on this machine. */
  jobs: RunningJob[];
  /** What this machine gave in this window's session. */
  contribution: Contribution;
  farm: FarmState;
};

/** Why something cannot be done or shown, as `describeError` tells it: never a raw client error text. */
export type Problem = { kind: ErrorKind; message: string; code?: string };

export type Headline =
  | { kind: "notJoined" }
  /** The farm refused this machine's key (revoked, unknown): nothing runs until the donor joins again. */
  | { kind: "revoked"; problem: Problem }
  | { kind: "off" }
  /** Donating is on and the engine is connecting. */
  | { kind: "starting" }
  | { kind: "waiting" }
  | { kind: "working"; jobs: number }
  /** Finishing the running jobs, then donating switches off. */
  | { kind: "draining"; jobs: number }
  /** Switching off: running jobs go back to the queue. */
  | { kind: "stopping"; jobs: number }
  /** The policy holds donating back; running jobs finish, no new ones start. */
  | { kind: "paused"; jobs: number; reason: string; cause: PauseCause; until?: number; fix?: SettingFix }
  /** The engine paused itself (jobs kept failing); Resume takes work again. */
  | { kind: "autoPaused"; jobs: number; reason: string }
  /** Running jobs are held (stopped in place) while the donor uses this machine; they continue afterwards. */
  | { kind: "suspended"; jobs: number; since: number }
  /** Donating is on but the farm does not answer: since when, and why. */
  | { kind: "offline"; jobs: number; problem: Problem; since: number }
  /** The engine stopped on its own for a reason other than a refused key. */
  | { kind: "stopped"; reason: string };

export type HeadlineKind = Headline["kind"];

/**
 * A setting that lifts a pause. `ask`: Farmhand asks, then sets it (allowing a remote window to donate);
 * `open`: the settings editor opens on `tab` (where the machine-scoped setting lives), filtered to it.
 */
export type SettingFix = { setting: string; label: string; how: "ask" | "open"; tab: "user" | "remote" };

/** What the main button does: `rejoin` after a refused key, `stopNow` while finishing (gives the jobs back). */
export type ToggleAction = "join" | "rejoin" | "start" | "stop" | "stopNow" | "resume";

export type DonorActions = { snooze: boolean; finish: boolean; fix?: SettingFix };

export type PolicyState = {
  preset: string;
  /** Jobs at once as the policy says. */
  concurrency: number;
  /** Jobs at once as the farm allows this machine (its enrollment); absent until the farm said. */
  farmAllows?: number;
  /** What this machine really runs at once: the lesser of the two. */
  runsUpTo: number;
  idleMinutes: number;
  otherCpuPercent: number;
  donateOnBattery: boolean;
  /** Settings that could not be read, with why. */
  problems: string[];
};

export type RunningJob = { jobId: string; type: string; attempt: number; progress?: number; status?: string; startedAt: number };

export type Contribution = { succeeded: number; failed: number; canceled: number; busyMs: number };

export type FarmState = {
  /** What the farm looked like when it last answered; absent when nothing is known (or may be shown). */
  figures?: FarmFigures;
  freshness: Freshness;
};

export type Freshness =
  /** No view shows the farm, so it is not asked. */
  | { kind: "notWatched" }
  | { kind: "loading" }
  | { kind: "live" }
  /** The figures are as the farm last answered up to `asOf`; `why` it does not answer now. */
  | { kind: "lastKnown"; asOf: number; why: Problem }
  /** Nothing can be shown, and why. */
  | { kind: "missing"; why: Problem };

export type FarmFigures = {
  counts: { pending: number; running: number; succeeded: number; canceled: number; dead: number };
  /** Jobs finished per minute, oldest first, the last 60 minutes (as of when the farm answered). */
  throughput: number[];
  finishedLastHour: number;
  lanes: LaneRow[];
  workers: WorkerRow[];
  workersOnline: number;
  dead: DeadLetterRow[];
  deadTotal: number;
  /** May this machine's key retry, delete and cancel jobs. */
  canManage: boolean;
};

export type LaneRow = {
  routingKey: string;
  capabilities: string[];
  pending: number;
  running: number;
  /** Some online worker can run this lane's jobs (a worker whose capabilities are unknown counts as able). */
  servable: boolean;
};

export type WorkerRow = {
  workerId: string;
  name: string;
  isMe: boolean;
  online: boolean;
  revoked: boolean;
  /** When the farm last heard from it, on this machine's clock. */
  lastSeenAt: number;
  /** Jobs at once: the farm's grant; for this machine what it really runs (PolicyState.runsUpTo). */
  maxJobs: number;
};

export type DeadLetterRow = {
  jobId: string;
  type: string;
  error?: string;
  attempt: number;
  maxAttempts: number;
  /** `attempts`: every attempt failed; `notRetryable`: it failed before its last attempt, so not worth retrying. */
  gaveUp: "attempts" | "notRetryable";
};

// ---------------------------------------------------------------------------------------------------------------
// What the state is derived from.

/** The engine while a worker exists in this window. */
export type EngineFacts = {
  phase: "running" | "paused" | "draining" | "stopping";
  connected: boolean;
  /** It was connected at least once since it started. */
  everConnected: boolean;
  /** When it lost the connection (or started, while never connected). */
  disconnectedSince?: number;
  /** Paused because the policy said so (otherwise the engine paused itself). */
  pausedByPolicy: boolean;
  /** The worker's own reason for its state (why it paused itself). */
  reason?: string;
  jobs: RunningJob[];
  /** Running jobs are held while the donor uses this machine (issue 13), since when. */
  suspendedSince?: number;
};

/** farm:overview as this state needs it (a structural subset of the server's answer). */
export type OverviewFacts = {
  counts: { pending: number; running: number; succeeded: number; canceled: number; dead: number };
  lanes: Array<{ routingKey: string; capabilities: string[]; pending: number; running: number }>;
  workers: Array<{ workerId: string; name: string; isMe: boolean; online: boolean; revoked: boolean; lastSeenAt: number; maxConcurrentJobs: number; capabilities?: string[] }>;
  workersOnline: number;
  throughput: Array<{ minuteStart: number; finished: number }>;
  finishedLastHour: number;
  deadLetters: number;
  deadLetterList: Array<{ jobId: string; type: string; error?: string; attempt: number; maxAttempts: number }>;
  canManage: boolean;
  /** The server's clock when it answered. */
  now: number;
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
  farm: FarmFacts;
};

/** An engine that has not connected within this long after starting is offline, not starting. */
export const CONNECT_GRACE_MS = 10_000;

export function deriveDonorState(f: DonorFacts): DonorState {
  const farm = farmState(f);
  const status = headline(f);
  const farmAllows = f.farm.overview?.workers.find((w) => w.isMe)?.maxConcurrentJobs;
  const runsUpTo = farmAllows === undefined ? f.policy.concurrency : Math.min(f.policy.concurrency, farmAllows);
  const jobs = f.engine?.jobs ?? [];
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
      ...(status.kind === "paused" && status.fix ? { fix: status.fix } : {}),
    },
    policy: { ...f.policy, ...(farmAllows === undefined ? {} : { farmAllows }), runsUpTo },
    jobs,
    contribution: f.contribution,
    farm: farm.figures ? { ...farm, figures: withMyLimit(farm.figures, runsUpTo) } : farm,
  };
}

const SNOOZABLE = new Set<HeadlineKind>(["starting", "waiting", "working", "paused", "offline", "suspended"]);
const FINISHABLE = new Set<HeadlineKind>(["starting", "waiting", "working", "paused", "autoPaused", "offline", "suspended"]);

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
    return { kind: "paused", jobs, reason: d.reason, cause: d.cause, ...(d.until === undefined ? {} : { until: d.until }), ...(fix ? { fix } : {}) };
  }
  if (!e) return f.stopped ? { kind: "stopped", reason: f.stopped.reason } : { kind: "starting" };
  if (e.suspendedSince !== undefined) return { kind: "suspended", jobs, since: e.suspendedSince };
  if (e.phase === "paused" && !e.pausedByPolicy) return { kind: "autoPaused", jobs, reason: e.reason ?? "paused" };
  if (!e.connected) {
    const since = e.disconnectedSince ?? f.now;
    if (e.everConnected || f.now - since >= CONNECT_GRACE_MS) return { kind: "offline", jobs, since, problem: offlineProblem(f, e.everConnected) };
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

/** The setting that lifts a pause, on the tab where it lives (machine-scoped settings: Remote in a remote window). */
function settingFix(cause: PauseCause, remoteWindow: boolean): SettingFix | undefined {
  const tab = remoteWindow ? "remote" : "user";
  switch (cause) {
    case "remoteWindow":
      return { setting: "farmhand.allowRemoteDonation", label: "Allow Donating from This Remote Window…", how: "ask", tab };
    case "timeWindowsUnreadable":
    case "outsideTimeWindows":
      return { setting: "farmhand.timeWindows", label: "Edit Time Windows", how: "open", tab };
    case "onBattery":
      return { setting: "farmhand.donateOnBattery", label: "Battery Setting", how: "open", tab };
    case "userActive":
      return { setting: "farmhand.idleMinutes", label: "Idle Minutes Setting", how: "open", tab };
    case "cpuBusy":
      return { setting: "farmhand.otherCpuThresholdPercent", label: "CPU Threshold Setting", how: "open", tab };
    default:
      return undefined;
  }
}

function farmState(f: DonorFacts): FarmState {
  const { overview, error, downSince, answeredAt } = f.farm;
  if (!f.joined) return { freshness: { kind: "notWatched" } };
  if (error && error.kind !== "unreachable") return { freshness: { kind: "missing", why: error } };
  const figures = overview && figuresOf(overview, answeredAt ?? f.now);
  if (error || downSince !== undefined) {
    const why: Problem = error ?? { kind: "unreachable", message: "the connection to the farm was lost" };
    return figures ? { figures, freshness: { kind: "lastKnown", asOf: downSince ?? answeredAt ?? f.now, why } } : { freshness: { kind: "missing", why } };
  }
  if (!f.farm.watched) return { freshness: { kind: "notWatched" } };
  return figures ? { figures, freshness: { kind: "live" } } : { freshness: { kind: "loading" } };
}

function figuresOf(o: OverviewFacts, answeredAt: number): FarmFigures {
  // Server times on this machine's clock: the server said `now` when this arrived.
  const skew = answeredAt - o.now;
  const online = o.workers.filter((w) => w.online);
  const servable = (caps: string[]) => online.some((w) => !w.capabilities || caps.every((c) => w.capabilities!.includes(c)));
  return {
    counts: o.counts,
    throughput: perMinute(o.throughput, o.now),
    finishedLastHour: o.finishedLastHour,
    lanes: o.lanes.map((l) => ({ ...l, servable: servable(l.capabilities) })),
    workers: o.workers.map((w) => ({
      workerId: w.workerId,
      name: w.name,
      isMe: w.isMe,
      online: w.online,
      revoked: w.revoked,
      lastSeenAt: w.lastSeenAt + skew,
      maxJobs: w.maxConcurrentJobs,
    })),
    workersOnline: o.workersOnline,
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

function withMyLimit(figures: FarmFigures, runsUpTo: number): FarmFigures {
  return { ...figures, workers: figures.workers.map((w) => (w.isMe ? { ...w, maxJobs: runsUpTo } : w)) };
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
