/**
 * The typed message protocol between the operator's console (a webview editor tab) and the extension.
 * Shared by both sides (media/console/main.ts imports it too); no 'vscode' import here, and no import of the
 * Convex functions (the webview is type-checked without them): the data types below are the parts of the
 * console functions' answers the webview shows, and the host assigns those answers to them, so a server
 * change the console does not follow breaks the host's build. What the backend shares (limits, the capability
 * grant rule) comes from its contract module, so the console refuses what the server would.
 */

import * as v from "valibot";
import { FAIR, isCapabilityGrant, LIMITS } from "../../convex/contract";
import { isRecord, message, parseMessage, type MessageOf } from "./webviewMessages";

const CONSOLE_PAGES = ["overview", "jobs", "workers", "access", "schedules"] as const;
export type ConsolePage = (typeof CONSOLE_PAGES)[number];
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
  /** Per client key with work (the busiest first), then keys whose jobs ended: its share of the farm and its ends. */
  clientKeys: ConsoleKeyShare[];
  /** The busiest job types' recent queue wait (older waits weigh less), from the metrics' counters; null: none yet. */
  waitsByType: Array<{ type: string; p50Ms: number | null; p95Ms: number | null }>;
  /** Jobs ended so far, all keys together (the share of each key is its part of these). */
  finished: FinishedCounts;
  /** Jobs answered from the result cache without running, so far (of `finished.succeeded`, which counts them too). */
  cacheHits: number;
  /** Lanes with jobs waiting that nothing online can run, with why; `type`: the one job type the lane holds. */
  stuck?: ConsoleStuckLane[];
};

export type ConsoleStuckLane = {
  routingKey: string;
  capabilities: string[];
  requirements: { memoryMB?: number; cores?: number; gpu?: { vendor?: string; vramMB?: number } } | null;
  /** An `apps` lane's apps (the first ones) and whether more came: its label names them. */
  apps?: Array<{ name: string; version: number }>;
  moreApps?: boolean;
  pending: number;
  type: string | null;
  waitCode: string;
  waitReason: string;
};

/**
 * A client key on the Overview: its weight and limit, running and waiting jobs, share of the last hour's starts (0–1),
 * jobs ended so far. `clientKeyId` null: the jobs a host app submitted without a key (no weight: they take no turn).
 */
export type ConsoleKeyShare = {
  clientKeyId: string | null;
  name: string;
  weight: number | null;
  maxRunning: number | null;
  running: number;
  waiting: number;
  shareLastHour: number;
  oldestReadyAt: number | null;
  finished: FinishedCounts;
};

type FinishedCounts = { succeeded: number; dead: number; canceled: number };

/** A client key's part of the jobs that ended (0–1; 0 when none has ended). */
export function shareOfFinished(key: { finished: FinishedCounts }, all: FinishedCounts): number {
  const total = all.succeeded + all.dead + all.canceled;
  return total === 0 ? 0 : (key.finished.succeeded + key.finished.dead + key.finished.canceled) / total;
}

/** The Overview's cache figure: hits so far and their part of the jobs that succeeded. */
export function cacheHitsText(overview: Pick<ConsoleOverview, "cacheHits" | "finished">): string {
  const { cacheHits, finished } = overview;
  if (cacheHits === 0) return "none yet";
  return `${cacheHits} of ${finished.succeeded} succeeded (${Math.round((cacheHits / Math.max(cacheHits, finished.succeeded)) * 100)} %)`;
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
  /** Why it waits (convex/queue/waitReasons.ts): a stable code and the sentence; null when only its turn holds it. */
  waitCode?: string | null;
  waitReason?: string | null;
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
  /** The job filter the bulk action ran on (its status line names it, and goes when the filter or page changes). */
  bulkFilter?: ConsoleJobFilter;
  /** Why the data cannot be shown (not an operator, farm unreachable, …). */
  error?: string;
  /** Whose key the console uses ("an operator key", "this machine's worker key"), or undefined with none. */
  credential?: string;
  /** The connection to the farm is down since then: what is shown is as of that moment. */
  offlineSince?: number;
};

/** Extension → webview. */
export type ConsoleMessage =
  | { type: "state"; state: ConsoleState }
  /** A token or key made on the Access page: shown once. */
  | { type: "secret"; kind: SecretKind; secret: string }
  | { type: "notice"; text: string }
  | { type: "rejected"; reason: string }
  /** A client key's fairness weights, as loadFairnessWeights asked. */
  | { type: "fairnessWeights"; clientKeyId: string; entries: FairnessWeight[] };

// Webview → extension. One schema per message (valibot), each field with the reason it is refused for; the message
// types are what the schemas let through (v.InferOutput), so the checks and the types cannot drift apart. The bounds
// are the server's (convex/contract), so the console refuses here, next to the field, what the farm would refuse.

// A document id's shape: Convex's are lowercase base32, the local test server's end in the table's name
// ("…10006clientKeys"); which document it names, if any, is the server's to say.
const ID = /^[A-Za-z0-9]{1,64}$/;
/** A key's name, as the farm takes it (it refuses a blank one and more than 100 characters). */
const NAME_CHARS = 100;
/** An enrollment's donor label, as the farm takes it (it refuses more than 128 characters). */
const DONOR_CHARS = 128;
/** Times a filter may name: from the epoch to the year 9999 (what a datetime-local field can hold). */
const LATEST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/* @__NO_SIDE_EFFECTS__ */ const id = (needs: string) => v.pipe(v.string(needs), v.regex(ID, needs));
/** Text that is not blank, of at most `max` characters. */
/* @__NO_SIDE_EFFECTS__ */ const text = (max: number, needs: string, tooLong = needs) =>
  v.pipe(v.string(needs), v.check((s) => s.trim().length > 0, needs), v.maxLength(max, tooLong));
/** A whole number from `min` to `max` (NaN and the infinities are not). */
/* @__NO_SIDE_EFFECTS__ */ const wholeNumber = (min: number, max: number, needs: string) => v.pipe(v.number(needs), v.integer(needs), v.minValue(min, needs), v.maxValue(max, needs));
/** A fairness key as the farm takes it: 1 to 64 bytes of UTF-8. */
/* @__NO_SIDE_EFFECTS__ */ const fairnessKey = (needs: string) => v.pipe(v.string(needs), v.minLength(1, needs), v.maxBytes(FAIR.fairnessKeyBytes, needs));
/* @__NO_SIDE_EFFECTS__ */ const weight = (needs: string) => v.pipe(v.number(needs), v.minValue(FAIR.weightMin, needs), v.maxValue(FAIR.weightMax, needs));

const FAIRNESS_KEY = fairnessKey("needs a fairness key");
const ENTRY_NEEDS = `needs fairnessWeights entries { fairnessKey (1–${FAIR.fairnessKeyBytes} bytes), weight (${FAIR.weightMin}–${FAIR.weightMax}) }`;
const WEIGHTS_NEEDS = `needs fairnessWeights null or at most ${FAIR.fairnessWeightsPerKey} entries`;
/** The first fairness key named twice, if any. */
function repeatedKey(entries: Array<{ fairnessKey: string }>): string | undefined {
  const seen = new Set<string>();
  return entries.find((e) => seen.size === seen.add(e.fairnessKey).size)?.fairnessKey;
}
/** At most FAIR.fairnessWeightsPerKey entries, each key once, each key and weight as the farm takes them. */
const FAIRNESS_WEIGHTS = v.pipe(
  v.array(v.strictObject({ fairnessKey: fairnessKey(ENTRY_NEEDS), weight: weight(ENTRY_NEEDS) }, ENTRY_NEEDS), WEIGHTS_NEEDS),
  v.maxLength(FAIR.fairnessWeightsPerKey, WEIGHTS_NEEDS),
  v.check((entries) => repeatedKey(entries) === undefined, (issue) => `names the fairness key ${JSON.stringify(repeatedKey(issue.input))} twice`),
);
export type FairnessWeight = v.InferOutput<typeof FAIRNESS_WEIGHTS>[number];

/* @__NO_SIDE_EFFECTS__ */ const textFilter = (name: string, max: number) => v.optional(text(max, `needs ${name} to be text that is not blank`, `needs ${name} of at most ${max} characters`));
/* @__NO_SIDE_EFFECTS__ */ const timeFilter = (name: string) => v.optional(wholeNumber(0, LATEST_TIME, `needs ${name} to be a time in ms since the epoch`));
/**
 * The Jobs page's filter, as console:jobs takes it: every field optional, no field it does not know; `from`/`to`
 * bound the time a job was submitted (ms since the epoch, `from` inclusive, `to` exclusive).
 */
function jobFilterSchema() {
  return v.pipe(
    v.custom<Record<string, unknown>>(isRecord, "needs a filter object"),
    v.strictObject(
      {
        status: v.optional(v.picklist(JOB_STATUSES, `needs a status of ${JOB_STATUSES.join(", ")}`)),
        type: textFilter("type", 128),
        batchId: textFilter("batchId", 256),
        externalId: textFilter("externalId", 256),
        from: timeFilter("from"),
        to: timeFilter("to"),
        /** The client key the jobs count against (its id), and their fairness key. */
        clientKeyId: v.optional(id("needs clientKeyId to be a client key's id")),
        fairnessKey: v.optional(fairnessKey(`needs fairnessKey of 1 to ${FAIR.fairnessKeyBytes} bytes`)),
      },
      (issue) => `has an unknown filter field ${String(issue.input)}`,
    ),
    v.check((f) => f.from === undefined || f.to === undefined || f.from < f.to, "needs from before to"),
  );
}
export type ConsoleJobFilter = v.InferOutput<ReturnType<typeof jobFilterSchema>>;

const CAPABILITIES_NEEDS = "needs capabilities matching [a-z0-9:._-], optionally ending in *";
const NAME = text(NAME_CHARS, `needs a name of 1 to ${NAME_CHARS} characters`);
const FIELD_NEEDS = "needs a result field name";

/**
 * Every message the webview may send, by type. Built on the extension's first use (parseConsoleRequest): the webview
 * only sends these, and its bundle then carries none of them.
 */
function requestSchemas() {
  return {
    ready: message("ready", {}),
    page: message("page", { page: v.picklist(CONSOLE_PAGES, `needs a page of ${CONSOLE_PAGES.join(", ")}`) }),
    filter: message("filter", { filter: jobFilterSchema() }),
    /** The Jobs page's next (older) page of the same filter, or back to the newest. */
    jobsPage: message("jobsPage", { to: v.picklist(["older", "newest"], "needs to: older or newest") }),
    /** The Workers page's next page (workers seen less recently), or the one before it. */
    workersPage: message("workersPage", { to: v.picklist(["older", "newer"], "needs to: older or newer") }),
    openJob: message("openJob", { jobId: v.nullable(id("needs a job id or null")) }),
    retryJob: message("retryJob", { jobId: id("needs a job id") }),
    cancelJob: message("cancelJob", { jobId: id("needs a job id") }),
    revokeWorker: message("revokeWorker", { workerId: id("needs a worker id") }),
    revokeEnrollment: message("revokeEnrollment", { enrollmentId: id("needs an enrollment id") }),
    revokeClientKey: message("revokeClientKey", { clientKeyId: id("needs a client key id") }),
    /** Retry or cancel every job the Jobs page's filter selects (asks for a confirmation first). */
    bulk: message("bulk", { action: v.picklist(["retry", "cancel"], "needs action retry or cancel") }),
    purgeDead: message("purgeDead", {}),
    /** Drop the result cache's entries of this job type (asks for a confirmation first). */
    invalidateCache: message("invalidateCache", { jobType: text(256, "needs a job type") }),
    /** The Access page's switch: may one worker's accepted result enter the result cache (turning it on asks first). */
    setCacheUnvalidated: message("setCacheUnvalidated", { on: v.boolean("needs on: true or false") }),
    /** `donor`: who the machine belongs to (none when not given). */
    createToken: message("createToken", {
      capabilities: v.pipe(v.array(v.pipe(v.string(CAPABILITIES_NEEDS), v.check(isCapabilityGrant, CAPABILITIES_NEEDS)), CAPABILITIES_NEEDS), v.maxLength(LIMITS.capabilitiesPerWorker, CAPABILITIES_NEEDS)),
      slots: wholeNumber(1, 32, "needs slots from 1 to 32"),
      ttlHours: wholeNumber(1, 24 * 365, "needs ttlHours from 1 to 8760"),
      canManage: v.boolean("needs canManage true or false"),
      donor: v.optional(text(DONOR_CHARS, `needs a donor of 1 to ${DONOR_CHARS} characters, or none`)),
    }),
    createClientKey: message("createClientKey", { name: NAME, canPublish: v.boolean("needs canPublish true or false") }),
    createOperatorKey: message("createOperatorKey", { name: NAME }),
    revokeOperatorKey: message("revokeOperatorKey", { operatorKeyId: id("needs an operator key id") }),
    /** The Schedules page's buttons (Remove asks for a confirmation first). */
    pauseSchedule: message("pauseSchedule", { scheduleId: id("needs a schedule id") }),
    resumeSchedule: message("resumeSchedule", { scheduleId: id("needs a schedule id") }),
    removeSchedule: message("removeSchedule", { scheduleId: id("needs a schedule id") }),
    /** Save an image of the open job's result (a field of it, see resultImages) to a file. */
    saveImage: message("saveImage", { jobId: id("needs a job id"), field: v.pipe(v.string(FIELD_NEEDS), v.regex(FIELD_NAME, FIELD_NEEDS)) }),
    /** A client key's share of the farm, each field replaced (null: the default — weight 1, no limit, no fairness weights). */
    setClientKeyLimits: message("setClientKeyLimits", {
      clientKeyId: id("needs a client key id"),
      weight: v.nullable(weight(`needs weight null or from ${FAIR.weightMin} to ${FAIR.weightMax}`)),
      maxRunning: v.nullable(wholeNumber(0, FAIR.maxRunningMax, `needs maxRunning null or a whole number from 0 to ${FAIR.maxRunningMax}`)),
      fairnessWeights: v.nullable(FAIRNESS_WEIGHTS),
    }),
    /** The Access page's form wants a client key's fairness weights, to show them for editing. */
    loadFairnessWeights: message("loadFairnessWeights", { clientKeyId: id("needs a client key id") }),
  };
}
type Requests = ReturnType<typeof requestSchemas>;
let requests: Requests | undefined;

/** Webview → extension. Every one is validated (parseConsoleRequest) before it is acted on. */
export type ConsoleRequest = MessageOf<Requests>;

/** Validates a message that arrived from the webview; anything else is refused with the reason. */
export function parseConsoleRequest(raw: unknown) {
  requests ??= requestSchemas();
  return parseMessage(requests, raw);
}

/** A fairness key as the farm takes it: 1 to 64 bytes of UTF-8. */
export function isFairnessKey(value: unknown): value is string {
  return v.is(FAIRNESS_KEY, value);
}

/** "gold=4, free=0.5" (one entry per comma or line) as fairness weights, or why not. The console's form speaks this. */
export function fairnessWeightsOfText(text: string): FairnessWeight[] | string {
  const entries: Array<{ fairnessKey: string; weight: number }> = [];
  for (const part of text.split(/[,\n]/).map((p) => p.trim()).filter((p) => p.length > 0)) {
    const at = part.lastIndexOf("=");
    if (at <= 0) return `"${part.slice(0, 40)}" is not key=weight`;
    entries.push({ fairnessKey: part.slice(0, at).trim(), weight: Number(part.slice(at + 1).trim()) });
  }
  const parsed = v.safeParse(FAIRNESS_WEIGHTS, entries, { abortEarly: true });
  return parsed.success ? parsed.output : parsed.issues[0].message;
}

/** Fairness weights as the form shows them. */
export function fairnessWeightsText(entries: FairnessWeight[]): string {
  return entries.map((e) => `${e.fairnessKey}=${e.weight}`).join(", ");
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

/** A bulk action's status line: "cancel: 366 job(s) changed of 366 looked at — done (jobs with status pending)". */
export function bulkStatusText(bulk: ConsoleBulk | null, filter: ConsoleJobFilter, keyName?: string): string {
  const on = `jobs ${describeJobFilter(filter, keyName)}`;
  if (bulk === null) return `Starting… (${on})`;
  return `${bulk.action}: ${bulk.affected} job(s) changed of ${bulk.scanned} looked at${bulk.done ? " — done" : "…"} (${on})`;
}

const CONSOLE_MESSAGE = v.looseObject({ type: v.picklist(["state", "secret", "notice", "rejected", "fairnessWeights"] satisfies Array<ConsoleMessage["type"]>) });

export function isConsoleMessage(raw: unknown): raw is ConsoleMessage {
  return v.is(CONSOLE_MESSAGE, raw);
}
