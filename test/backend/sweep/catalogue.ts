import type { FunctionReference } from "convex/server";
import { api } from "../../../convex/_generated/api";
import { LIMITS } from "../../../convex/core/limits";
import { ENERGY_J_MAX } from "../../../convex/trust/energy";
import {
  badCapabilities,
  badFraction,
  badInteger,
  badNumber,
  badSecret,
  badText,
  badTime,
  badValue,
  hugeString,
  INJECTION,
  UNICODE,
  wrongType,
  type Case,
} from "./garbage";
import type { Rng } from "./prng";
import type { OrgWorld } from "./world";

/** The two orgs a sweep runs against: `a` is the caller's own org, `b` another org. */
export type Worlds = { a: OrgWorld; b: OrgWorld };

/** `nullable`: null is a legal value (v.any), so "null for an optional field" is not garbage there. */
type Field = { optional?: boolean; nullable?: boolean; garbage: (rng: Rng, w: Worlds) => Case };

export type PublicFunction = {
  name: string;
  kind: "query" | "mutation";
  ref: FunctionReference<"query" | "mutation">;
  fields: Record<string, Field>;
  /** Well-formed arguments against org a's objects (they may still be refused by the state they meet). */
  valid: (w: Worlds, rng: Rng) => Record<string, unknown>;
};

const allKeys = (w: Worlds) => [
  w.a.farm.clientKey,
  w.a.worker.apiKey,
  w.a.freshToken,
  w.a.revokedClientKey,
  w.a.revokedWorker.apiKey,
];
const workerKey: Field = {
  garbage: (rng, w) =>
    rng.chance(0.15)
      ? { value: w.a.revokedWorker.apiKey, expect: "reject", label: "revoked worker key" }
      : badSecret(rng, "fh_w_", allKeys(w).filter((k) => !k.startsWith("fh_w_"))),
};
const clientKey: Field = {
  garbage: (rng, w) =>
    rng.chance(0.15)
      ? { value: w.a.revokedClientKey, expect: "reject", label: "revoked client key" }
      : badSecret(rng, "fh_c_", allKeys(w).filter((k) => !k.startsWith("fh_c_"))),
};
const token: Field = {
  garbage: (rng, w) =>
    rng.chance(0.3)
      ? { value: rng.pick([w.a.usedToken, w.a.expiredToken]), expect: "reject", label: "used or expired token" }
      : badSecret(rng, "fh_e_", allKeys(w).filter((k) => !k.startsWith("fh_e_"))),
};
const text = (max: number, options: { allowEmpty?: boolean; cut?: boolean; optional?: boolean } = {}): Field => ({
  optional: options.optional,
  garbage: (rng) => badText(rng, max, options),
});
const capabilities = (max: number, optional = false): Field => ({ optional, garbage: (rng) => badCapabilities(rng, max) });
const integer = (min: number, max: number): Field => ({ optional: true, garbage: (rng) => badInteger(rng, min, max) });
const boolean: Field = { optional: true, garbage: (rng) => wrongType(rng, "boolean") };
/** A worker's concurrency as it declares it: a whole number from 0 to the per-worker cap. */
const slots = (optional = true): Field => ({ optional, garbage: (rng) => badInteger(rng, 0, LIMITS.maxConcurrentJobs) });
/** What a metered worker's jobs may still download: a whole number of bytes. */
const maxBytes = integer(0, Number.MAX_SAFE_INTEGER);
/** The energy an attempt used: joules, any finite number from 0 to the cap (fractions are legal). */
const energyJ: Field = { optional: true, garbage: (rng) => badNumber(rng, 0, ENERGY_J_MAX) };
const value = (maxBytes: number, optional = true): Field => ({ optional, nullable: true, garbage: (rng) => badValue(rng, maxBytes) });

/** A manager's key: a worker key of the org without canManage is refused too. */
const managerKey: Field = {
  garbage: (rng, w) =>
    rng.chance(0.25) ? { value: w.a.worker.apiKey, expect: "reject", label: "worker without canManage" } : workerKey.garbage(rng, w),
};

/** Ids of other tables' rows (enrollments, client keys, workers, bulk operations): only org a's own are found. */
const otherId: Field = {
  garbage: (rng, w) => {
    const foreign = [...Object.values(w.b.otherIds), ...Object.values(w.b.jobs), w.a.jobs.pending];
    const choices: Array<() => Case> = [
      () => ({ value: rng.pick(foreign), expect: "notFound", label: "another org's id or another table's" }),
      () => ({ value: rng.pick(["", "abc", "0".repeat(32), ...INJECTION, ...UNICODE]), expect: "notFound", label: "not an id" }),
      () => ({ value: hugeString(rng), expect: "notFound", label: "huge" }),
      () => wrongType(rng, "string"),
    ];
    return rng.pick(choices)();
  },
};

/** Capability grants (an enrollment's): as capabilities, but "*" alone is a legal grant (every capability). */
const capabilityGrants: Field = {
  garbage: (rng) => {
    for (;;) {
      const bad = badCapabilities(rng, LIMITS.capabilitiesPerWorker);
      if (!(Array.isArray(bad.value) && bad.value.includes("*"))) return bad;
    }
  },
};

/** The console's job filter. */
const jobFilter: Field = {
  garbage: (rng) => {
    const choices: Array<() => Case> = [
      () => ({ value: { from: 10, to: 5 }, expect: "reject", label: "from after to" }),
      () => ({ value: { from: rng.pick([NaN, Infinity, -1]) }, expect: "reject", label: "from not a time" }),
      () => ({ value: { type: "t".repeat(LIMITS.typeChars + 1) }, expect: "reject", label: "type over the cap" }),
      () => ({ value: { batchId: "" }, expect: "reject", label: "empty batchId" }),
      () => ({ value: { externalId: hugeString(rng) }, expect: "reject", label: "huge externalId" }),
      () => ({ value: { status: rng.pick(["done", "RUNNING", "", "failed"]) }, expect: "reject", label: "no such status" }),
      () => ({ value: { status: "dead", orgId: "x" }, expect: "reject", label: "extra field" }),
      () => ({ value: { type: rng.pick(INJECTION) }, expect: "either", label: "injection type" }),
      () => wrongType(rng, "array"),
    ];
    return rng.pick(choices)();
  },
};

const paginationOpts: Field = {
  garbage: (rng) => {
    const choices: Array<() => Case> = [
      () => ({ value: { numItems: rng.pick([0, -1, 101, 1.5, NaN, 1e9]), cursor: null }, expect: "reject", label: "bad numItems" }),
      () => ({ value: { numItems: 10 }, expect: "reject", label: "no cursor" }),
      () => ({ value: { numItems: 10, cursor: 5 }, expect: "reject", label: "cursor not a string" }),
      () => wrongType(rng, "array"),
    ];
    return rng.pick(choices)();
  },
};

const bulkAction: Field = {
  garbage: (rng) => ({ value: rng.pick(["purge", "RETRY", "", "delete", 1, null]), expect: "reject", label: "no such action" }),
};

/** Job ids: anything but one of org a's own jobs must read as "no such job". */
const jobId: Field = {
  garbage: (rng, w) => {
    const other = [...Object.values(w.b.jobs), ...Object.values(w.a.otherIds), ...Object.values(w.b.otherIds)];
    const choices: Array<() => Case> = [
      () => ({ value: rng.pick(other), expect: "notFound", label: "another org's job or another table's id" }),
      () => ({ value: rng.pick(["", "../../", "abc", "0".repeat(32), ...INJECTION, ...UNICODE]), expect: "notFound", label: "not an id" }),
      () => ({ value: hugeString(rng), expect: "notFound", label: "huge" }),
      () => ({ value: String(w.a.jobs.pending).toUpperCase(), expect: "notFound", label: "case-changed id" }),
      () => wrongType(rng, "string"),
    ];
    return rng.pick(choices)();
  },
};

/** Lease ids: only the live lease of the calling worker is accepted. */
const leaseId: Field = {
  garbage: (rng, w) => {
    const stale = [
      ...Object.values(w.a.staleLeases),
      w.a.managerLease, // another worker of the same org
      w.b.liveLease, // another org's live lease
      ...Object.values(w.b.staleLeases),
    ];
    const choices: Array<() => Case> = [
      () => ({ value: rng.pick(stale), expect: "reject", label: "stale or foreign lease" }),
      () => ({ value: rng.pick(["", "fh_l_", "fh_l_" + "A".repeat(22), w.a.liveLease + "x", ...INJECTION]), expect: "reject", label: "not a lease" }),
      () => ({ value: hugeString(rng), expect: "reject", label: "huge" }),
      () => wrongType(rng, "string"),
    ];
    return rng.pick(choices)();
  },
};

const WORKER_CAPS = ["cpu", "gpu"];

function jobSpecFields(): Record<string, Field> {
  return {
    type: text(LIMITS.typeChars),
    payload: value(LIMITS.payloadBytes),
    priority: integer(LIMITS.priorityMin, LIMITS.priorityMax),
    requiredCapabilities: capabilities(LIMITS.capabilitiesPerJob, true),
    externalId: text(LIMITS.externalIdChars, { optional: true }),
    maxAttempts: integer(1, LIMITS.maxAttempts),
    leaseMs: integer(LIMITS.leaseMsMin, LIMITS.leaseMsMax),
    delayMs: integer(0, LIMITS.delayMsMax),
    runAt: { optional: true, garbage: (rng) => badTime(rng) },
    batchId: text(LIMITS.batchIdChars, { optional: true }),
    cache: { optional: true, garbage: (rng) => ({ value: rng.pick([{ ttlMs: -1 }, { ttlMs: 1.5 }, { ttlMs: NaN }, "yes", 1]), expect: "reject", label: "not a cache spec" }) },
  };
}

function validSpec(rng: Rng): Record<string, unknown> {
  return { type: "sweep.job", payload: { n: rng.int(100) }, priority: rng.int(10), requiredCapabilities: rng.pick([[], ["cpu"]]) };
}

/** One bad job inside an otherwise good batch, or a bad batch as a whole. */
const batchJobs: Field = {
  garbage: (rng, w) => {
    const specFields = jobSpecFields();
    const choices: Array<() => Case> = [
      () => {
        const field = rng.pick(Object.keys(specFields));
        const bad = specFields[field].garbage(rng, w);
        const jobs = [validSpec(rng), { ...validSpec(rng), [field]: bad.value }];
        return { value: jobs, expect: bad.expect, label: `jobs[1].${field}: ${bad.label}` };
      },
      () => ({ value: Array.from({ length: LIMITS.batchCount + 1 }, () => ({ type: "x" })), expect: "reject", label: "too many jobs" }),
      () => ({ value: [validSpec(rng), { ...validSpec(rng), extra: 1 }], expect: "reject", label: "extra field in a job" }),
      () => ({ value: [validSpec(rng), {}], expect: "reject", label: "job without type" }),
      () => ({ value: [null], expect: "reject", label: "null job" }),
      () => ({ value: [], expect: "either", label: "empty batch" }),
      () => wrongType(rng, "array"),
    ];
    return rng.pick(choices)();
  },
};

/** A function whose only argument is the caller's key: a worker's, or an operator's (a worker enrolled with canManage). */
function keyOnly(kind: PublicFunction["kind"], ref: PublicFunction["ref"], name: string, who: "worker" | "manager"): PublicFunction {
  return {
    name,
    kind,
    ref,
    fields: { apiKey: who === "worker" ? workerKey : managerKey },
    valid: (w) => ({ apiKey: w.a[who].apiKey }),
  };
}

export const PUBLIC_FUNCTIONS: PublicFunction[] = [
  {
    name: "workers:enroll",
    kind: "mutation",
    ref: api.workers.enroll,
    fields: {
      token,
      name: text(LIMITS.nameChars),
      machineId: text(LIMITS.nameChars),
      capabilities: capabilities(LIMITS.capabilitiesPerWorker),
    },
    valid: (w) => ({ token: w.a.freshToken, name: "sweeper", machineId: "m-sweep", capabilities: WORKER_CAPS }),
  },
  {
    name: "workers:claim",
    kind: "mutation",
    ref: api.workers.claim,
    fields: { apiKey: workerKey, capabilities: capabilities(LIMITS.capabilitiesPerWorker), max: integer(1, LIMITS.claimMax), maxBytes },
    valid: (w, rng) => ({ apiKey: w.a.worker.apiKey, capabilities: WORKER_CAPS, max: 1 + rng.int(2) }),
  },
  keyOnly("query", api.workers.doorbell, "workers:doorbell", "worker"),
  {
    name: "workers:ready",
    kind: "mutation",
    ref: api.workers.ready,
    fields: { apiKey: workerKey, capabilities: capabilities(LIMITS.capabilitiesPerWorker), slots: slots(false), maxBytes },
    valid: (w, rng) => ({ apiKey: w.a.worker.apiKey, capabilities: WORKER_CAPS, slots: rng.int(4) }),
  },
  keyOnly("mutation", api.workers.presence, "workers:presence", "worker"),
  {
    name: "workers:heartbeat",
    kind: "mutation",
    ref: api.workers.heartbeat,
    fields: {
      apiKey: workerKey,
      leaseId,
      progress: { optional: true, garbage: (rng) => badFraction(rng) },
      status: text(LIMITS.statusTextChars, { allowEmpty: true, optional: true }),
    },
    valid: (w) => ({ apiKey: w.a.worker.apiKey, leaseId: w.a.liveLease, progress: 0.25, status: "working" }),
  },
  {
    name: "workers:output",
    kind: "mutation",
    ref: api.workers.output,
    fields: { apiKey: workerKey, leaseId, chunk: text(LIMITS.outputChunkBytes, { allowEmpty: true }) },
    valid: (w) => ({ apiKey: w.a.worker.apiKey, leaseId: w.a.liveLease, chunk: "line\n" }),
  },
  {
    name: "workers:complete",
    kind: "mutation",
    ref: api.workers.complete,
    fields: { apiKey: workerKey, leaseId, result: value(LIMITS.resultBytes), slots: slots(), cpuMs: integer(0, LIMITS.cpuMsMax), maxBytes, energyJ },
    valid: (w, rng) => ({ apiKey: w.a.worker.apiKey, leaseId: w.a.liveLease, result: { ok: true }, slots: rng.int(3) }),
  },
  {
    name: "workers:fail",
    kind: "mutation",
    ref: api.workers.fail,
    fields: {
      apiKey: workerKey,
      leaseId,
      error: text(LIMITS.errorChars, { cut: true }),
      retryable: boolean,
      slots: slots(),
      cpuMs: integer(0, LIMITS.cpuMsMax),
      maxBytes,
      energyJ,
    },
    valid: (w) => ({ apiKey: w.a.worker.apiKey, leaseId: w.a.liveLease, error: "oops", retryable: true }),
  },
  {
    name: "workers:release",
    kind: "mutation",
    ref: api.workers.release,
    fields: { apiKey: workerKey, leaseId, slots: slots(), maxBytes },
    valid: (w, rng) => ({ apiKey: w.a.worker.apiKey, leaseId: w.a.liveLease, slots: rng.int(2) }),
  },
  keyOnly("query", api.workers.checkKey, "workers:checkKey", "worker"),
  keyOnly("query", api.workers.myCredit, "workers:myCredit", "worker"),
  keyOnly("query", api.farm.overview, "farm:overview", "worker"),
  {
    name: "farm:deadLetters",
    kind: "query",
    ref: api.farm.deadLetters,
    fields: { apiKey: workerKey, limit: integer(1, LIMITS.deadLettersListed) },
    valid: (w) => ({ apiKey: w.a.worker.apiKey, limit: 10 }),
  },
  ...(["overview", "workers"] as const).map((fn) => keyOnly("query", api.console[fn], `console:${fn}`, "manager")),
  ...(["leaderboard", "energy"] as const).map(
    (fn): PublicFunction => ({
      name: `console:${fn}`,
      kind: "query",
      ref: api.console[fn],
      fields: { apiKey: managerKey, weekOf: { garbage: (rng) => badInteger(rng, 0, 8.64e15) } },
      valid: (w) => ({ apiKey: w.a.manager.apiKey, weekOf: Date.UTC(2026, 10, 23) }),
    }),
  ),
  {
    name: "console:jobs",
    kind: "query",
    ref: api.console.jobs,
    fields: { apiKey: managerKey, filter: jobFilter, paginationOpts },
    valid: (w, rng) => ({
      apiKey: w.a.manager.apiKey,
      filter: rng.pick([{}, { status: "dead" }, { batchId: w.a.batchId, status: "pending" }]),
      paginationOpts: { numItems: 10, cursor: null },
    }),
  },
  {
    name: "console:job",
    kind: "query",
    ref: api.console.job,
    fields: { apiKey: managerKey, jobId },
    valid: (w) => ({ apiKey: w.a.manager.apiKey, jobId: w.a.jobs.running }),
  },
  {
    name: "console:jobOutput",
    kind: "query",
    ref: api.console.jobOutput,
    fields: { apiKey: managerKey, jobId, fromSeq: integer(0, LIMITS.outputChunksPerJob) },
    valid: (w) => ({ apiKey: w.a.manager.apiKey, jobId: w.a.jobs.running, fromSeq: 0 }),
  },
  {
    name: "console:bulkStatus",
    kind: "query",
    ref: api.console.bulkStatus,
    fields: { apiKey: managerKey, bulkId: otherId },
    valid: (w) => ({ apiKey: w.a.manager.apiKey, bulkId: w.a.jobs.pending }),
  },
  ...(["retryJob", "cancelJob", "purgeJob"] as const).map(
    (fn): PublicFunction => ({
      name: `consoleActions:${fn}`,
      kind: "mutation",
      ref: api.consoleActions[fn],
      fields: { apiKey: managerKey, jobId },
      valid: (w, rng) => ({ apiKey: w.a.manager.apiKey, jobId: rng.pick([w.a.jobs.dead, w.a.jobs.succeeded]) }),
    }),
  ),
  {
    name: "consoleActions:bulk",
    kind: "mutation",
    ref: api.consoleActions.bulk,
    fields: { apiKey: managerKey, action: bulkAction, filter: jobFilter },
    valid: (w, rng) => ({ apiKey: w.a.manager.apiKey, action: rng.pick(["retry", "cancel"]), filter: { batchId: w.a.batchId } }),
  },
  {
    name: "consoleActions:purgeDead",
    kind: "mutation",
    ref: api.consoleActions.purgeDead,
    fields: {
      apiKey: managerKey,
      type: text(LIMITS.typeChars, { optional: true }),
      from: { optional: true, garbage: (rng) => ({ value: rng.pick([NaN, -1, Infinity]), expect: "reject", label: "not a time" }) },
      to: { optional: true, garbage: (rng) => ({ value: rng.pick([NaN, -1, Infinity]), expect: "reject", label: "not a time" }) },
    },
    valid: (w) => ({ apiKey: w.a.manager.apiKey, type: "no-such-type" }),
  },
  {
    name: "consoleActions:invalidateCache",
    kind: "mutation",
    ref: api.consoleActions.invalidateCache,
    fields: { apiKey: managerKey, type: text(LIMITS.typeChars, { optional: true }) },
    valid: (w) => ({ apiKey: w.a.manager.apiKey, type: "no-such-type" }),
  },
  {
    name: "consoleAccess:setCacheUnvalidated",
    kind: "mutation",
    ref: api.consoleAccess.setCacheUnvalidated,
    fields: { apiKey: managerKey, on: { garbage: (rng) => wrongType(rng, "boolean") } },
    // a managing worker's key may not (forbidden): an operator key does
    valid: (w) => ({ apiKey: w.a.operatorKey, on: false }),
  },
  keyOnly("query", api.consoleAccess.list, "consoleAccess:list", "manager"),
  {
    name: "consoleAccess:createEnrollment",
    kind: "mutation",
    ref: api.consoleAccess.createEnrollment,
    fields: {
      apiKey: managerKey,
      capabilities: capabilityGrants,
      maxConcurrentJobs: integer(1, LIMITS.maxConcurrentJobs),
      ttlMs: integer(1, 365 * 24 * 3600 * 1000),
      canManage: boolean,
      donor: text(LIMITS.nameChars, { allowEmpty: true, optional: true }),
      maxCores: integer(1, LIMITS.maxCoresGranted),
    },
    valid: (w) => ({ apiKey: w.a.manager.apiKey, capabilities: WORKER_CAPS, maxConcurrentJobs: 2, ttlMs: 60_000, donor: "alice", maxCores: 8 }),
  },
  {
    name: "consoleAccess:revokeEnrollment",
    kind: "mutation",
    ref: api.consoleAccess.revokeEnrollment,
    fields: { apiKey: managerKey, enrollmentId: otherId },
    valid: (w) => ({ apiKey: w.a.manager.apiKey, enrollmentId: w.a.otherIds.expiredEnrollmentId }),
  },
  {
    name: "consoleAccess:createClientKey",
    kind: "mutation",
    ref: api.consoleAccess.createClientKey,
    fields: { apiKey: managerKey, name: text(LIMITS.nameChars), canPublish: boolean },
    valid: (w) => ({ apiKey: w.a.manager.apiKey, name: "sweep-key" }),
  },
  {
    name: "consoleAccess:revokeClientKey",
    kind: "mutation",
    ref: api.consoleAccess.revokeClientKey,
    fields: { apiKey: managerKey, clientKeyId: otherId },
    valid: (w) => ({ apiKey: w.a.manager.apiKey, clientKeyId: w.a.otherIds.clientKeyId }),
  },
  {
    name: "consoleAccess:createOperatorKey",
    kind: "mutation",
    ref: api.consoleAccess.createOperatorKey,
    fields: { apiKey: managerKey, name: text(LIMITS.nameChars) },
    // a managing worker's key may not make one (forbidden): an operator key does
    valid: (w) => ({ apiKey: w.a.operatorKey, name: "sweep-operator" }),
  },
  {
    name: "consoleAccess:revokeOperatorKey",
    kind: "mutation",
    ref: api.consoleAccess.revokeOperatorKey,
    fields: { apiKey: managerKey, operatorKeyId: otherId },
    valid: (w) => ({ apiKey: w.a.manager.apiKey, operatorKeyId: w.a.otherIds.operatorKeyId }),
  },
  {
    name: "consoleAccess:revokeWorker",
    kind: "mutation",
    ref: api.consoleAccess.revokeWorker,
    fields: { apiKey: managerKey, workerId: otherId },
    valid: (w) => ({ apiKey: w.a.manager.apiKey, workerId: w.a.revokedWorker.workerId }),
  },
  {
    name: "jobs:submit",
    kind: "mutation",
    ref: api.jobs.submit,
    fields: { clientKey, ...jobSpecFields() },
    valid: (w, rng) => ({ clientKey: w.a.farm.clientKey, ...validSpec(rng) }),
  },
  {
    name: "jobs:submitBatch",
    kind: "mutation",
    ref: api.jobs.submitBatch,
    fields: { clientKey, jobs: batchJobs },
    valid: (w, rng) => ({ clientKey: w.a.farm.clientKey, jobs: [validSpec(rng), validSpec(rng)] }),
  },
  {
    name: "jobs:get",
    kind: "query",
    ref: api.jobs.get,
    fields: { clientKey, jobId },
    valid: (w) => ({ clientKey: w.a.farm.clientKey, jobId: w.a.jobs.running }),
  },
  {
    name: "jobs:cancel",
    kind: "mutation",
    ref: api.jobs.cancel,
    fields: { clientKey, jobId },
    valid: (w, rng) => ({ clientKey: w.a.farm.clientKey, jobId: rng.pick([w.a.jobs.succeeded, w.a.jobs.canceled]) }),
  },
  {
    name: "jobs:byExternalId",
    kind: "query",
    ref: api.jobs.byExternalId,
    fields: { clientKey, externalId: text(LIMITS.externalIdChars) },
    valid: (w) => ({ clientKey: w.a.farm.clientKey, externalId: w.a.externalId }),
  },
  {
    name: "jobs:setWebhook",
    kind: "mutation",
    ref: api.jobs.setWebhook,
    fields: {
      clientKey,
      url: {
        nullable: true,
        garbage: (rng) => {
          const choices: Array<() => Case> = [
            () => ({ value: rng.pick(["ftp://x/y", "javascript:alert(1)", "not a url", "", "/relative", "http://u:p@h/"]), expect: "reject", label: "not an http(s) URL" }),
            () => ({ value: "http://x/" + "a".repeat(3_000), expect: "reject", label: "too long" }),
            () => ({ value: "http://127.0.0.1:9/" + rng.pick(INJECTION), expect: "either", label: "odd path" }),
            () => {
              const wrong = wrongType(rng, "string");
              return wrong.value === null ? { value: 42, expect: "reject", label: "wrong type: number" } : wrong; // null removes the webhook
            },
          ];
          return rng.pick(choices)();
        },
      },
    },
    valid: (w) => ({ clientKey: w.a.farm.clientKey, url: null }),
  },
  {
    name: "jobs:batchStatus",
    kind: "query",
    ref: api.jobs.batchStatus,
    fields: { clientKey, batchId: text(LIMITS.batchIdChars) },
    valid: (w) => ({ clientKey: w.a.farm.clientKey, batchId: w.a.batchId }),
  },
];
