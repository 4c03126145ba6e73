/**
 * The one account of this window's donor that every surface shows: the status bar, the Farm tree, the control
 * panel (this object crosses to the webview as it is) and the toasts. `deriveDonorState` (deriveDonorState.ts)
 * makes it, in one place, from what the membership, the engine, the policy and the farm's data say; a surface only
 * formats it (donorStateText.ts), so two surfaces cannot disagree.
 *
 * Plain data only (it is posted to the webview and exported to tests): no functions, no class instances.
 */
import type { PauseCause } from "../policy/policy";
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
  /** The donor allowed this machine to run the farm's apps (`farmhand.runApps` in the user settings). */
  runsApps: boolean;
  /** What the farm credits this machine with this week; absent until the farm said (or while it is not asked). */
  credit?: WeekCredit;
  /**
   * GPU jobs alone are held (farmhand.pauseGpuWhileRunning): a program the donor named runs. Donating goes on for
   * other jobs; GPU jobs are frozen and none is taken. With the setting that lifts it.
   */
  gpuPause?: { reason: string; fix: SettingFix };
  farm: FarmState;
};

/**
 * This machine's credit for the current UTC week (from the days farm:overview reports), and the energy its jobs used
 * (kWh) with how this machine finds it: measured by the CPU package's counter, or estimated.
 */
export type WeekCredit = { cpuHours: number; jobs: number; energyKWh?: number; energyBy?: { method: "measured" | "estimated"; source: string } };

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
  /**
   * Running jobs are held (frozen in place) while the donor uses this machine; they continue afterwards. When the
   * policy's pause froze them: its reason, cause and the setting that lifts it, as for `paused`.
   */
  | { kind: "suspended"; jobs: number; since: number; reason?: string; cause?: PauseCause; fix?: SettingFix }
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
  /** Where the preset's value comes from (the donor may have set it where it does not count). */
  presetFrom?: PresetSource;
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
  /** What this machine senses: the idle source in use (or that only VS Code activity counts), the CPU temperature and the limit in force. */
  sensing?: string;
};

/** Settings tabs a preset can come from; `workspaceIgnored`: only a workspace sets it, which VS Code ignores. */
export type PresetSource = "default" | "user" | "remote" | "workspaceIgnored";

/** `type`: as views name it (an app job: `app.<name> v<version>`); `suspendedSince`: frozen in place since then. */
export type RunningJob = { jobId: string; type: string; attempt: number; progress?: number; status?: string; startedAt: number; suspendedSince?: number };

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
  /** The lane's capabilities no online worker offers, e.g. a job type nobody handles (empty when unknown). */
  nobodyHandles: string[];
  /** The class of machine its jobs need (powers of two); none: any machine. */
  requirements?: { memoryMB?: number; cores?: number; gpu?: { vendor?: string; vramMB?: number } };
  /** An `apps` lane: the first apps (name, version) it holds jobs of, and whether more came (its label names them). */
  apps?: Array<{ name: string; version: number }>;
  moreApps?: boolean;
  /** Why nothing online runs its jobs, as the farm says it (convex/queue/waitReasons.ts); none: something can. */
  waitCode?: string;
  waitReason?: string;
};

export type WorkerRow = {
  workerId: string;
  name: string;
  isMe: boolean;
  online: boolean;
  revoked: boolean;
  /** When the farm last heard from it (the farm's clock). */
  lastSeenAt: number;
  /** It said it stopped, then (offline since). */
  stoppedAt?: number;
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
