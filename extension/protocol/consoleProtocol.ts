/**
 * The typed message protocol between the operator's console (a webview editor tab) and the extension.
 * Shared by both sides (media/console/main.ts imports it too); no 'vscode' import here, and no import of the
 * Convex functions (the webview is type-checked without them): the data types below are the parts of the
 * console functions' answers the webview shows, and the host assigns those answers to them, so a server
 * change the console does not follow breaks the host's build. What the backend shares (limits, the capability
 * grant rule) comes from its contract module, so the console refuses what the server would.
 */

import { FAIR, isCapabilityGrant, LIMITS } from "../../convex/contract";

export type ConsolePage = "overview" | "jobs" | "workers" | "access" | "schedules";
const CONSOLE_PAGES: readonly ConsolePage[] = ["overview", "jobs", "workers", "access", "schedules"];
export const JOB_STATUSES = ["pending", "running", "succeeded", "canceled", "dead", "waiting"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * console:overview. Times are timestamps (the query reads no clock, so its answer changes only with the data):
 * each worker is online until its `onlineUntil`; the oldest waiting job has waited since `oldestReadyAt`.
 * The console derives what they mean now with overviewAt.
 */
export type ConsoleOverview = {
  counts: Record<Exclude<JobStatus, "waiting">, number>;
  onlineUntil: number[];
  /** Workers online (as of the summary) beyond those `onlineUntil` lists: a large farm lists the first ones. */
  onlineUnlisted: number;
  workers: number;
  throughput: Array<{ minuteStart: number; finished: number; failed: number }>;
  queueWait: { p50Ms: number; p95Ms: number; samples: number } | null;
  oldestReadyAt: number | null;
  /** Per client key with work (the busiest first): its share of the farm. */
  clientKeys: ConsoleKeyShare[];
  /** The busiest job types' recent queue wait (older waits weigh less), from the metrics' counters; null: none yet. */
  waitsByType: Array<{ type: string; p50Ms: number | null; p95Ms: number | null }>;
  /** The busiest client keys' jobs now and ended so far (`none`: jobs a host app submitted without a key). */
  byClientKey: Array<{ name: string; jobs: Record<JobStatus, number>; finished: FinishedCounts }>;
  /** Jobs ended so far, all keys together (the share of each key is its part of these). */
  finished: FinishedCounts;
};

/** A client key on the Overview: its weight and limit, running and waiting jobs, share of the last hour's starts (0–1). */
export type ConsoleKeyShare = {
  clientKeyId: string;
  name: string;
  weight: number;
  maxRunning: number | null;
  running: number;
  waiting: number;
  shareLastHour: number;
  oldestReadyAt: number | null;
};

type FinishedCounts = { succeeded: number; dead: number; canceled: number };

/** A client key's part of the jobs that ended (0–1; 0 when none has ended). */
export function shareOfFinished(key: { finished: FinishedCounts }, all: FinishedCounts): number {
  const total = all.succeeded + all.dead + all.canceled;
  return total === 0 ? 0 : (key.finished.succeeded + key.finished.dead + key.finished.canceled) / total;
}

const HOUR_MS = 3_600_000;

/**
 * What the overview means at `now`: workers online, how long the oldest waiting job has waited (of the farm and of
 * each client key), the last hour's minutes.
 */
export function overviewAt(overview: ConsoleOverview, now: number) {
  const waited = (readyAt: number | null) => (readyAt === null ? null : Math.max(0, now - readyAt));
  return {
    workersOnline: overview.onlineUntil.filter((until) => until > now).length + overview.onlineUnlisted,
    oldestWaitingMs: waited(overview.oldestReadyAt),
    throughput: overview.throughput.filter((m) => m.minuteStart > now - HOUR_MS),
    clientKeys: overview.clientKeys.map((k) => ({ ...k, oldestWaitingMs: waited(k.oldestReadyAt) })),
  };
}

/** A worker's state at `now`: revoked, online (a call within the online window) or offline. */
export function workerStateAt(worker: Pick<ConsoleWorker, "revoked" | "onlineUntil">, now: number): "revoked" | "online" | "offline" {
  if (worker.revoked) return "revoked";
  return worker.onlineUntil !== null && worker.onlineUntil > now ? "online" : "offline";
}

/** An enrollment token's state at `now`: the list says open until its expiry passes. */
export function tokenStateAt(token: { state: string; expiresAt: number }, now: number): string {
  return token.state === "open" && token.expiresAt <= now ? "expired" : token.state;
}

/** A row of console:jobs */
export type ConsoleJobRow = {
  jobId: string;
  type: string;
  status: JobStatus;
  attempt: number;
  maxAttempts: number;
  progress?: number;
  error?: string;
  createdAt: number;
  /** Frozen on its worker since then (the donor came back to the machine). */
  suspendedSince?: number;
  /** The client key it counts against (none: a host app's own job) and its fairness key. */
  clientKeyId?: string;
  fairnessKey?: string;
};

/** console:job */
export type ConsoleJobPage = ConsoleJobRow & {
  payload: unknown;
  result: unknown;
  events: Array<{ kind: string; at: number; workerName?: string; detail?: string; backoffMs?: number }>;
  output: { text: string };
  webhook: { state: string; attempts: unknown[] } | null;
  /** A pending job's capabilities (its type's first of all) that no online worker offers. */
  nobodyHandles?: string[];
  /** Why it ended, as a code (dependency_failed, inputs_too_large); the parent whose end canceled it; parents it waits for. */
  errorCode?: string;
  failedParent?: string;
  unmetParents?: number;
  /** A replicated job's instances (issue 20); state "single" for a job that runs once. */
  validation?: ConsoleValidation;
  /** A replicated job's output, one section per instance (worker) that wrote it. */
  outputs?: Array<{ instance: number; round: number; workerName: string; text: string }>;
  /** The client key it counts against (its weight and limit) and its fairness key; null for a host app's own job. */
  countsAgainst?: { name: string; weight: number; maxRunning: number | null; fairnessKey: string | null } | null;
  /** Pending beyond its turn: why ("client key 'ci' is at its limit of 20 running"). */
  waitReason?: string | null;
  /** A cache hit: the job whose result it took; waiting for an identical job in flight; submitted with `cache`. */
  cachedFrom?: string;
  cacheWaitsOn?: string;
  cacheable?: boolean;
};

export type ConsoleValidation = {
  state: "single" | "validating" | "valid" | "no_quorum" | "too_many_errors";
  quorum: number;
  instances: Array<{ workerName: string; status: string; late?: boolean; resultHash?: string; error?: string; valid?: boolean; credit?: string; creditNote?: string }>;
};

/** A row of console:workers */
export type ConsoleWorker = {
  workerId: string;
  name: string;
  isMe: boolean;
  revoked: boolean;
  /** Online until then; null for a revoked worker. */
  onlineUntil: number | null;
  lastSeenAt: number;
  advertisedCapabilities: string[];
  slotsInUse: number;
  maxConcurrentJobs: number;
  jobsDone: number;
  cpuMs: number;
  /** The energy its jobs used, all time (joules, measured or estimated by the worker). */
  energyJ: number;
  /** What the worker measured on its machine, or null when it has not reported. */
  facts: { cores: number; memoryMB: number; os: string; arch: string; gpus: Array<{ vendor: string; model: string; vramMB: number }> } | null;
  /** Adaptive trust (issue 20): its lowest streaks per job type, lowest first, and its daily job quota. */
  trust?: ConsoleWorkerTrust;
};

export type ConsoleWorkerTrust = {
  streaks: Array<{ type: string; streak: number; invalid: number; trusted: boolean }>;
  moreStreaks: boolean;
  /** `lastDay`: its latest UTC day of counted claims (claims count only while the quota is reduced). */
  quota: { limit: number; full: number; halvings: number; lastDay: { day: number; claimed: number } | null };
};

/** console:leaderboard: CPU time given, most first, with the energy each donor's jobs used (joules) */
export type ConsoleLeaderboard = Record<"week" | "allTime", Array<{ name: string; cpuMs: number; wallMs: number; jobs: number; energyJ: number }>>;

/** console:energy: energy given (joules) per job type all time, and per donor this week; most first */
export type ConsoleEnergy = {
  byType: Array<{ type: string; energyJ: number; reports: number }>;
  weekByDonor: Array<{ name: string; energyJ: number; jobs: number }>;
  weekTotalJ: number;
};

/** console:bulkStatus of the bulk action started from this console */
export type ConsoleBulk = { action: string; scanned: number; affected: number; done: boolean };

/** consoleAccess:list */
export type ConsoleAccess = {
  /** The console uses an operator key: only then may it make operator keys and client keys that publish apps. */
  asOperator: boolean;
  /** Results accepted from one worker alone may enter the result cache (off by default). */
  cacheUnvalidated?: boolean;
  enrollments: Array<{
    enrollmentId: string;
    tokenPrefix: string;
    state: string;
    capabilities: string[];
    maxConcurrentJobs: number;
    canManage: boolean;
    donor: string | null;
    expiresAt: number;
  }>;
  clientKeys: Array<{
    clientKeyId: string;
    name: string;
    keyPrefix: string;
    revoked: boolean;
    canPublish: boolean;
    /** Its share of the farm: weight (1 by default), at most this many running (null: no limit), fairness weights set. */
    weight: number;
    maxRunning: number | null;
    fairnessWeights: number;
  }>;
  operatorKeys: Array<{ operatorKeyId: string; name: string; keyPrefix: string; revoked: boolean; isMe: boolean }>;
};

/** consoleSchedules:list: the first schedules by name (`more`: the org has others). Times are ms since the epoch. */
export type ConsoleSchedules = {
  schedules: Array<{
    scheduleId: string;
    name: string;
    cron: string;
    timezone: string;
    overlap: "skip" | "allow";
    type: string;
    paused: boolean;
    /** Why the farm paused it (its client key was revoked): it cannot be resumed. Null when a user paused it, or it runs. */
    pausedReason: string | null;
    /** The next ticks (none while paused). */
    nextRuns: number[];
    lastRunAt: number | null;
    lastJob: { jobId: string; status: JobStatus } | null;
    lastSkippedAt: number | null;
    /** The last tick that could not submit its job: why (code and message) and when; null once a tick submits again. */
    lastError: string | null;
    lastErrorCode: string | null;
    lastErrorAt: number | null;
  }>;
  more: boolean;
};

/** consoleAccess:minted: what revoking an operator key or a worker also revokes (each kind counted up to 100). */
export type ConsoleMinted = { clientKeys: number; operatorKeys: number; enrollments: number; workers: number; more: boolean };

/**
 * The sentence a revoke question adds for what the key made ("" when nothing): "It also revokes what it created: 2
 * client keys, 1 operator key and 3 workers, and what those created."
 */
export function alsoRevokesText(minted: ConsoleMinted): string {
  const kinds: Array<[number, string, string]> = [
    [minted.clientKeys, "client key", "client keys"],
    [minted.operatorKeys, "operator key", "operator keys"],
    [minted.enrollments, "unused enrollment token", "unused enrollment tokens"],
    [minted.workers, "worker", "workers"],
  ];
  const parts = kinds.filter(([n]) => n > 0).map(([n, one, many]) => `${n}${minted.more && n >= 100 ? "+" : ""} ${n === 1 ? one : many}`);
  if (parts.length === 0) return "";
  const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(", ")} and ${parts[parts.length - 1]}`;
  return ` It also revokes what it created: ${list}, and what those created.`;
}

/** The kinds of secret the Access page makes, each shown once. */
export type SecretKind = "enrollment" | "client" | "operator";

/**
 * The PNG images a job's result carries: its top-level fields whose text is a base64 PNG (the Mandelbrot app's
 * `png`), or the result itself when it is one.
 */
export function resultImages(result: unknown): Array<{ field: string; base64: string }> {
  const isPng = (value: unknown): value is string => typeof value === "string" && value.startsWith(PNG_BASE64) && BASE64.test(value);
  if (isPng(result)) return [{ field: "result", base64: result }];
  if (typeof result !== "object" || result === null || Array.isArray(result)) return [];
  return Object.entries(result as Record<string, unknown>).flatMap(([field, value]) => (FIELD_NAME.test(field) && isPng(value) ? [{ field, base64: value }] : []));
}
/** The base64 of a PNG file's first 8 bytes (its signature). */
const PNG_BASE64 = "iVBORw0KGgo";
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const FIELD_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The Jobs page's filter, as console:jobs takes it: every field optional; `from`/`to` bound the time a job was
 * submitted (ms since the epoch, `from` inclusive, `to` exclusive).
 */
export type ConsoleJobFilter = {
  status?: JobStatus;
  type?: string;
  batchId?: string;
  externalId?: string;
  from?: number;
  to?: number;
  /** The client key the jobs count against (its id), and their fairness key. */
  clientKeyId?: string;
  fairnessKey?: string;
};
const TEXT_FILTERS = { type: 128, batchId: 256, externalId: 256 } as const;
/** Times a filter may name: from the epoch to the year 9999 (what a datetime-local field can hold). */
const LATEST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * One page of console:jobs. `checked` names the filter fields no index serves: those were checked on this page
 * of the index's jobs only, so it may hold fewer jobs than asked for (or none) while more match further back.
 * `page` counts from 0 (the newest); `hasOlder` says whether the index has more past this page.
 */
export type ConsoleJobsPage = { rows: ConsoleJobRow[]; checked: string[]; scanned: number; page: number; hasOlder: boolean };

/** What the console shows: the page, its data (undefined until the first answer), and the filter in use. */
export type ConsoleState = {
  page: ConsolePage;
  filter: ConsoleJobFilter;
  overview?: ConsoleOverview;
  jobs?: ConsoleJobsPage;
  job?: ConsoleJobPage | null;
  workers?: ConsoleWorker[];
  /** Which page of console:workers `workers` is (0: the most recently seen), and whether less recent ones follow. */
  workersPaging?: { page: number; hasOlder: boolean };
  leaderboard?: ConsoleLeaderboard;
  /** The overview's energy section (console:energy, this week). */
  energy?: ConsoleEnergy;
  access?: ConsoleAccess;
  schedules?: ConsoleSchedules;
  bulk?: ConsoleBulk | null;
  /** Why the data cannot be shown (not an operator, farm unreachable, …). */
  error?: string;
  /** Whose key the console uses ("an operator key", "this machine's worker key"), or undefined with none. */
  credential?: string;
  /** The connection to the farm is down since then: what is shown is as of that moment. */
  offlineSince?: number;
};

/** Webview → extension. Every one is validated before it is acted on. */
export type ConsoleRequest =
  | { type: "ready" }
  | { type: "page"; page: ConsolePage }
  | { type: "filter"; filter: ConsoleJobFilter }
  /** The Jobs page's next (older) page of the same filter, or back to the newest. */
  | { type: "jobsPage"; to: "older" | "newest" }
  /** The Workers page's next page (workers seen less recently), or the one before it. */
  | { type: "workersPage"; to: "older" | "newer" }
  | { type: "openJob"; jobId: string | null }
  | { type: "retryJob"; jobId: string }
  | { type: "cancelJob"; jobId: string }
  | { type: "revokeWorker"; workerId: string }
  | { type: "revokeEnrollment"; enrollmentId: string }
  | { type: "revokeClientKey"; clientKeyId: string }
  /** Retry or cancel every job the Jobs page's filter selects (asks for a confirmation first). */
  | { type: "bulk"; action: "retry" | "cancel" }
  | { type: "purgeDead" }
  /** Drop the result cache's entries of this job type (asks for a confirmation first). */
  | { type: "invalidateCache"; jobType: string }
  /** The Access page's switch: may one worker's accepted result enter the result cache (turning it on asks first). */
  | { type: "setCacheUnvalidated"; on: boolean }
  /** `donor`: who the machine belongs to (none when not given). */
  | { type: "createToken"; capabilities: string[]; slots: number; ttlHours: number; canManage: boolean; donor?: string }
  | { type: "createClientKey"; name: string; canPublish: boolean }
  | { type: "createOperatorKey"; name: string }
  | { type: "revokeOperatorKey"; operatorKeyId: string }
  /** The Schedules page's buttons (Remove asks for a confirmation first). */
  | { type: "pauseSchedule" | "resumeSchedule" | "removeSchedule"; scheduleId: string }
  /** Save an image of the open job's result (a field of it, see resultImages) to a file. */
  | { type: "saveImage"; jobId: string; field: string }
  /** A client key's share of the farm, each field replaced (null: the default — weight 1, no limit, no fairness weights). */
  | { type: "setClientKeyLimits"; clientKeyId: string; weight: number | null; maxRunning: number | null; fairnessWeights: FairnessWeight[] | null }
  /** The Access page's form wants a client key's fairness weights, to show them for editing. */
  | { type: "loadFairnessWeights"; clientKeyId: string };

export type FairnessWeight = { fairnessKey: string; weight: number };

/** Extension → webview. */
export type ConsoleMessage =
  | { type: "state"; state: ConsoleState }
  /** A token or key made on the Access page: shown once. */
  | { type: "secret"; kind: SecretKind; secret: string }
  | { type: "notice"; text: string }
  | { type: "rejected"; reason: string }
  /** A client key's fairness weights, as loadFairnessWeights asked. */
  | { type: "fairnessWeights"; clientKeyId: string; entries: FairnessWeight[] };

// A document id's shape: Convex's are lowercase base32, the local test server's end in the table's name
// ("…10006clientKeys"); which document it names, if any, is the server's to say.
const ID = /^[A-Za-z0-9]{1,64}$/;

type Parsed = { ok: true; request: ConsoleRequest } | { ok: false; reason: string };

const FIELDS: Record<ConsoleRequest["type"], readonly string[]> = {
  ready: [],
  page: ["page"],
  filter: ["filter"],
  jobsPage: ["to"],
  workersPage: ["to"],
  openJob: ["jobId"],
  retryJob: ["jobId"],
  cancelJob: ["jobId"],
  revokeWorker: ["workerId"],
  revokeEnrollment: ["enrollmentId"],
  revokeClientKey: ["clientKeyId"],
  bulk: ["action"],
  purgeDead: [],
  invalidateCache: ["jobType"],
  setCacheUnvalidated: ["on"],
  createToken: ["capabilities", "slots", "ttlHours", "canManage", "donor"],
  createClientKey: ["name", "canPublish"],
  createOperatorKey: ["name"],
  revokeOperatorKey: ["operatorKeyId"],
  saveImage: ["jobId", "field"],
  pauseSchedule: ["scheduleId"],
  resumeSchedule: ["scheduleId"],
  removeSchedule: ["scheduleId"],
  setClientKeyLimits: ["clientKeyId", "weight", "maxRunning", "fairnessWeights"],
  loadFairnessWeights: ["clientKeyId"],
};
/** A key's name, as the farm takes it (it refuses a blank one and more than 100 characters). */
const NAME_CHARS = 100;

function isName(value: unknown): value is string {
  return typeof value === "string" && value.trim().length > 0 && value.length <= NAME_CHARS;
}

/** An enrollment's donor label, as the farm takes it (it refuses more than 128 characters). */
const DONOR_CHARS = 128;

function isDonor(value: unknown): value is string {
  return typeof value === "string" && value.trim().length > 0 && value.length <= DONOR_CHARS;
}

function isId(value: unknown): value is string {
  return typeof value === "string" && ID.test(value);
}

/** Validates a message that arrived from the webview; anything else is refused with the reason. */
export function parseConsoleRequest(raw: unknown): Parsed {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { ok: false, reason: "message is not an object" };
  const { type, ...rest } = raw as Record<string, unknown>;
  if (typeof type !== "string" || !Object.hasOwn(FIELDS, type)) {
    return { ok: false, reason: `unknown message type ${JSON.stringify(type)?.slice(0, 80)}` };
  }
  const kind = type as ConsoleRequest["type"];
  const extra = Object.keys(rest).filter((k) => !FIELDS[kind].includes(k));
  if (extra.length > 0) return { ok: false, reason: `unexpected field(s) ${extra.slice(0, 5).join(", ")} in "${kind}"` };
  const bad = (why: string): Parsed => ({ ok: false, reason: `"${kind}" ${why}` });
  switch (kind) {
    case "ready":
      return { ok: true, request: { type: "ready" } };
    case "page":
      return CONSOLE_PAGES.includes(rest.page as ConsolePage)
        ? { ok: true, request: { type: "page", page: rest.page as ConsolePage } }
        : bad(`needs a page of ${CONSOLE_PAGES.join(", ")}`);
    case "filter": {
      const filter = parseJobFilter(rest.filter);
      return typeof filter === "string" ? bad(filter) : { ok: true, request: { type: "filter", filter } };
    }
    case "jobsPage":
      return rest.to === "older" || rest.to === "newest" ? { ok: true, request: { type: "jobsPage", to: rest.to } } : bad("needs to: older or newest");
    case "workersPage":
      return rest.to === "older" || rest.to === "newer" ? { ok: true, request: { type: "workersPage", to: rest.to } } : bad("needs to: older or newer");
    case "openJob":
      return rest.jobId === null || isId(rest.jobId) ? { ok: true, request: { type: "openJob", jobId: rest.jobId } } : bad("needs a job id or null");
    case "retryJob":
    case "cancelJob":
      return isId(rest.jobId) ? { ok: true, request: { type: kind, jobId: rest.jobId } } : bad("needs a job id");
    case "revokeWorker":
      return isId(rest.workerId) ? { ok: true, request: { type: "revokeWorker", workerId: rest.workerId } } : bad("needs a worker id");
    case "revokeEnrollment":
      return isId(rest.enrollmentId) ? { ok: true, request: { type: "revokeEnrollment", enrollmentId: rest.enrollmentId } } : bad("needs an enrollment id");
    case "revokeClientKey":
      return isId(rest.clientKeyId) ? { ok: true, request: { type: "revokeClientKey", clientKeyId: rest.clientKeyId } } : bad("needs a client key id");
    case "bulk":
      return rest.action === "retry" || rest.action === "cancel" ? { ok: true, request: { type: "bulk", action: rest.action } } : bad("needs action retry or cancel");
    case "purgeDead":
      return { ok: true, request: { type: "purgeDead" } };
    case "setCacheUnvalidated":
      return typeof rest.on === "boolean" ? { ok: true, request: { type: "setCacheUnvalidated", on: rest.on } } : bad("needs on: true or false");
    case "invalidateCache":
      return typeof rest.jobType === "string" && rest.jobType.length > 0 && rest.jobType.length <= 256
        ? { ok: true, request: { type: "invalidateCache", jobType: rest.jobType } }
        : bad("needs a job type");
    case "createToken": {
      const { capabilities, slots, ttlHours, canManage, donor } = rest;
      if (!Array.isArray(capabilities) || capabilities.length > LIMITS.capabilitiesPerWorker || !capabilities.every((c) => typeof c === "string" && isCapabilityGrant(c))) {
        return bad("needs capabilities matching [a-z0-9:._-], optionally ending in *");
      }
      if (!Number.isInteger(slots) || (slots as number) < 1 || (slots as number) > 32) return bad("needs slots from 1 to 32");
      if (!Number.isInteger(ttlHours) || (ttlHours as number) < 1 || (ttlHours as number) > 24 * 365) return bad("needs ttlHours from 1 to 8760");
      if (typeof canManage !== "boolean") return bad("needs canManage true or false");
      if (donor !== undefined && !isDonor(donor)) return bad(`needs a donor of 1 to ${DONOR_CHARS} characters, or none`);
      const request = { type: "createToken" as const, capabilities: capabilities as string[], slots: slots as number, ttlHours: ttlHours as number, canManage };
      return { ok: true, request: donor === undefined ? request : { ...request, donor } };
    }
    case "createClientKey":
      if (!isName(rest.name)) return bad(`needs a name of 1 to ${NAME_CHARS} characters`);
      if (typeof rest.canPublish !== "boolean") return bad("needs canPublish true or false");
      return { ok: true, request: { type: "createClientKey", name: rest.name, canPublish: rest.canPublish } };
    case "createOperatorKey":
      return isName(rest.name) ? { ok: true, request: { type: "createOperatorKey", name: rest.name } } : bad(`needs a name of 1 to ${NAME_CHARS} characters`);
    case "revokeOperatorKey":
      return isId(rest.operatorKeyId) ? { ok: true, request: { type: "revokeOperatorKey", operatorKeyId: rest.operatorKeyId } } : bad("needs an operator key id");
    case "saveImage":
      if (!isId(rest.jobId)) return bad("needs a job id");
      return typeof rest.field === "string" && FIELD_NAME.test(rest.field) ? { ok: true, request: { type: "saveImage", jobId: rest.jobId, field: rest.field } } : bad("needs a result field name");
    case "pauseSchedule":
    case "resumeSchedule":
    case "removeSchedule":
      return isId(rest.scheduleId) ? { ok: true, request: { type: kind, scheduleId: rest.scheduleId } } : bad("needs a schedule id");
    case "setClientKeyLimits": {
      if (!isId(rest.clientKeyId)) return bad("needs a client key id");
      if (rest.weight !== null && !isWeight(rest.weight)) return bad(`needs weight null or from ${FAIR.weightMin} to ${FAIR.weightMax}`);
      if (rest.maxRunning !== null && !(Number.isInteger(rest.maxRunning) && (rest.maxRunning as number) >= 0 && (rest.maxRunning as number) <= FAIR.maxRunningMax)) {
        return bad(`needs maxRunning null or a whole number from 0 to ${FAIR.maxRunningMax}`);
      }
      const weights = rest.fairnessWeights === null ? null : parseFairnessWeights(rest.fairnessWeights);
      if (typeof weights === "string") return bad(weights);
      return {
        ok: true,
        request: { type: "setClientKeyLimits", clientKeyId: rest.clientKeyId, weight: rest.weight, maxRunning: rest.maxRunning as number | null, fairnessWeights: weights },
      };
    }
    case "loadFairnessWeights":
      return isId(rest.clientKeyId) ? { ok: true, request: { type: "loadFairnessWeights", clientKeyId: rest.clientKeyId } } : bad("needs a client key id");
  }
}

function isWeight(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= FAIR.weightMin && value <= FAIR.weightMax;
}

const utf8 = new TextEncoder();

/** A fairness key as the farm takes it: 1 to 64 bytes of UTF-8. */
export function isFairnessKey(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && utf8.encode(value).length <= FAIR.fairnessKeyBytes;
}

/** At most FAIR.fairnessWeightsPerKey entries, each key once, each key and weight as the farm takes them; or why not. */
function parseFairnessWeights(raw: unknown): FairnessWeight[] | string {
  if (!Array.isArray(raw) || raw.length > FAIR.fairnessWeightsPerKey) return `needs fairnessWeights null or at most ${FAIR.fairnessWeightsPerKey} entries`;
  const seen = new Set<string>();
  const entries: FairnessWeight[] = [];
  for (const entry of raw as unknown[]) {
    const { fairnessKey, weight, ...others } = (typeof entry === "object" && entry !== null ? entry : {}) as Record<string, unknown>;
    if (Object.keys(others).length > 0 || !isFairnessKey(fairnessKey) || !isWeight(weight)) {
      return `needs fairnessWeights entries { fairnessKey (1–${FAIR.fairnessKeyBytes} bytes), weight (${FAIR.weightMin}–${FAIR.weightMax}) }`;
    }
    if (seen.has(fairnessKey)) return `names the fairness key ${JSON.stringify(fairnessKey)} twice`;
    seen.add(fairnessKey);
    entries.push({ fairnessKey, weight });
  }
  return entries;
}

/** "gold=4, free=0.5" (one entry per comma or line) as fairness weights, or why not. The console's form speaks this. */
export function fairnessWeightsOfText(text: string): FairnessWeight[] | string {
  const entries: Array<{ fairnessKey: string; weight: number }> = [];
  for (const part of text.split(/[,\n]/).map((p) => p.trim()).filter((p) => p.length > 0)) {
    const at = part.lastIndexOf("=");
    if (at <= 0) return `"${part.slice(0, 40)}" is not key=weight`;
    entries.push({ fairnessKey: part.slice(0, at).trim(), weight: Number(part.slice(at + 1).trim()) });
  }
  return parseFairnessWeights(entries);
}

/** Fairness weights as the form shows them. */
export function fairnessWeightsText(entries: FairnessWeight[]): string {
  return entries.map((e) => `${e.fairnessKey}=${e.weight}`).join(", ");
}

/**
 * The filter as console:jobs would take it, or why not: the same bounds the server checks (so a refusal is said
 * here, next to the field, not as a failed subscription), and no field it does not know.
 */
function parseJobFilter(raw: unknown): ConsoleJobFilter | string {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return "needs a filter object";
  const fields = raw as Record<string, unknown>;
  const known = ["status", ...Object.keys(TEXT_FILTERS), "from", "to", "clientKeyId", "fairnessKey"];
  const unknown = Object.keys(fields).filter((k) => !known.includes(k));
  if (unknown.length > 0) return `has an unknown filter field ${unknown.slice(0, 5).join(", ")}`;
  const filter: ConsoleJobFilter = {};
  if (fields.status !== undefined) {
    if (!JOB_STATUSES.includes(fields.status as JobStatus)) return `needs a status of ${JOB_STATUSES.join(", ")}`;
    filter.status = fields.status as JobStatus;
  }
  for (const [name, maxChars] of Object.entries(TEXT_FILTERS) as Array<[keyof typeof TEXT_FILTERS, number]>) {
    const value = fields[name];
    if (value === undefined) continue;
    if (typeof value !== "string" || value.trim().length === 0) return `needs ${name} to be text that is not blank`;
    if (value.length > maxChars) return `needs ${name} of at most ${maxChars} characters`;
    filter[name] = value;
  }
  for (const name of ["from", "to"] as const) {
    const value = fields[name];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > LATEST_TIME) return `needs ${name} to be a time in ms since the epoch`;
    filter[name] = value as number;
  }
  if (filter.from !== undefined && filter.to !== undefined && filter.from >= filter.to) return "needs from before to";
  if (fields.clientKeyId !== undefined) {
    if (!isId(fields.clientKeyId)) return "needs clientKeyId to be a client key's id";
    filter.clientKeyId = fields.clientKeyId;
  }
  if (fields.fairnessKey !== undefined) {
    if (!isFairnessKey(fields.fairnessKey)) return `needs fairnessKey of 1 to ${FAIR.fairnessKeyBytes} bytes`;
    filter.fairnessKey = fields.fairnessKey;
  }
  return filter;
}

/**
 * "with status dead, type demo.echo, submitted from … to …", or "in the farm" with no filter; for questions and
 * notes. `keyName`: the filter's client key by name, when known.
 */
export function describeJobFilter(filter: ConsoleJobFilter, keyName?: string): string {
  const parts = [
    filter.clientKeyId !== undefined ? `client key ${keyName ?? filter.clientKeyId}` : undefined,
    filter.fairnessKey !== undefined ? `fairness key ${filter.fairnessKey}` : undefined,
    filter.status !== undefined ? `status ${filter.status}` : undefined,
    filter.type !== undefined ? `type ${filter.type}` : undefined,
    filter.batchId !== undefined ? `batch ${filter.batchId}` : undefined,
    filter.externalId !== undefined ? `external id ${filter.externalId}` : undefined,
    filter.from !== undefined ? `submitted from ${new Date(filter.from).toLocaleString()}` : undefined,
    filter.to !== undefined ? `submitted before ${new Date(filter.to).toLocaleString()}` : undefined,
  ].filter((p) => p !== undefined);
  return parts.length === 0 ? "in the farm" : `with ${parts.join(", ")}`;
}

export function isConsoleMessage(raw: unknown): raw is ConsoleMessage {
  if (typeof raw !== "object" || raw === null) return false;
  const type = (raw as { type?: unknown }).type;
  return type === "state" || type === "secret" || type === "notice" || type === "rejected" || type === "fairnessWeights";
}
