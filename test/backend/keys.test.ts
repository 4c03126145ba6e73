import { afterEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { enrollWorker, expectCode, newBackend, newFarm, snapshot, TEST_TYPES } from "./setup";

afterEach(() => {
  vi.useRealTimers();
});

describe("joining and keys", () => {
  test("an operator's token enrolls a worker once and returns a prefixed, high-entropy API key", async () => {
    const farm = await newFarm();
    const { token } = await farm.t.mutation(internal.admin.createEnrollment, {
      orgId: farm.orgId,
      capabilities: ["cpu", "ollama:*"],
      maxConcurrentJobs: 3,
      canManage: true,
    });
    expect(token).toMatch(/^fh_e_[A-Za-z0-9_-]{43}$/);
    const { workerId, apiKey } = await farm.t.mutation(api.workers.enroll, {
      token,
      name: "laptop",
      machineId: "m-1",
      capabilities: ["cpu"],
    });
    expect(apiKey).toMatch(/^fh_w_[A-Za-z0-9_-]{43}$/);
    expect(farm.clientKey).toMatch(/^fh_c_[A-Za-z0-9_-]{43}$/);
    const worker = await farm.t.run(async (ctx) => await ctx.db.get(workerId));
    expect(worker).toMatchObject({ orgId: farm.orgId, maxConcurrentJobs: 3, canManage: true, revoked: false });
    expect(worker!.keyPrefix).toBe(apiKey.slice(0, 9));
    await expectCode(
      farm.t.mutation(api.workers.enroll, { token, name: "again", machineId: "m-2", capabilities: [] }),
      "token_used",
    );
  });

  test("secrets are stored only as SHA-256 hashes", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const dump = JSON.stringify(await snapshot(farm.t)) +
      JSON.stringify(await farm.t.run(async (ctx) => await ctx.db.query("clientKeys").collect()));
    expect(dump).not.toContain(w.apiKey);
    expect(dump).not.toContain(farm.clientKey);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(w.apiKey));
    const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
    expect(dump).toContain(hex);
  });

  test("two keys never repeat", async () => {
    const farm = await newFarm();
    const keys = new Set<string>();
    for (let i = 0; i < 20; i++) {
      keys.add((await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: `k${i}` })).key);
    }
    expect(keys.size).toBe(20);
  });

  test("an expired token is refused and creates no worker", async () => {
    vi.useFakeTimers();
    const farm = await newFarm();
    const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: [], ttlMs: 60_000 });
    vi.advanceTimersByTime(60_001);
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.workers.enroll, { token, name: "late", machineId: "m", capabilities: [] }), "token_expired");
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("malformed and unknown enrollment tokens are refused", async () => {
    const farm = await newFarm();
    const args = { name: "x", machineId: "m", capabilities: [] };
    await expectCode(farm.t.mutation(api.workers.enroll, { token: "hello", ...args }), "bad_key");
    await expectCode(farm.t.mutation(api.workers.enroll, { token: "fh_e_" + "A".repeat(43), ...args }), "bad_key");
  });

  test("enrollment validates its inputs", async () => {
    const farm = await newFarm();
    const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: [] });
    await expectCode(farm.t.mutation(api.workers.enroll, { token, name: " ", machineId: "m", capabilities: [] }), "invalid_argument");
    await expectCode(farm.t.mutation(api.workers.enroll, { token, name: "n", machineId: "m", capabilities: ["GPU!"] }), "invalid_argument");
    await expectCode(
      farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: ["Bad Name"] }),
      "invalid_argument",
    );
    await expectCode(
      farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: [], maxConcurrentJobs: 0 }),
      "invalid_argument",
    );
    // the token survived the failed attempts
    await farm.t.mutation(api.workers.enroll, { token, name: "n", machineId: "m", capabilities: [] });
  });

  test("unknown, malformed and wrong-kind keys are refused with bad_key", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    const unknownWorker = "fh_w_" + "B".repeat(43);
    await expectCode(farm.t.query(api.workers.checkKey, { apiKey: unknownWorker }), "bad_key");
    await expectCode(farm.t.query(api.workers.checkKey, { apiKey: "nonsense" }), "bad_key");
    await expectCode(farm.t.query(api.workers.checkKey, { apiKey: "" }), "bad_key");
    expect(await farm.t.query(api.workers.checkKey, { apiKey: w.apiKey })).toEqual({ workerId: w.workerId, name: "laptop" });
    await expectCode(farm.t.mutation(api.workers.claim, { apiKey: farm.clientKey, capabilities: TEST_TYPES }), "bad_key");
    await expectCode(farm.t.mutation(api.jobs.submit, { clientKey: w.apiKey, type: "x" }), "bad_key");
    await expectCode(farm.t.query(api.jobs.get, { clientKey: "fh_c_" + "C".repeat(43), jobId: "x" }), "bad_key");
  });

  test("revoking a worker takes effect on its very next call", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm);
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
    const [job] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    await farm.t.mutation(internal.admin.revokeWorker, { workerId: w.workerId });
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.workers.heartbeat, { apiKey: w.apiKey, leaseId: job.leaseId }), "revoked");
    await expectCode(farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: job.leaseId, result: 1 }), "revoked");
    await expectCode(farm.t.query(api.workers.checkKey, { apiKey: w.apiKey }), "revoked");
    expect(await snapshot(farm.t)).toEqual(before);
  });

  test("revoking a client key takes effect at once", async () => {
    const farm = await newFarm();
    const { key, clientKeyId } = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "tmp" });
    await farm.t.mutation(api.jobs.submit, { clientKey: key, type: "x" });
    await farm.t.mutation(internal.admin.revokeClientKey, { clientKeyId });
    await expectCode(farm.t.mutation(api.jobs.submit, { clientKey: key, type: "x" }), "revoked");
  });

  test("operator functions refuse unknown ids and empty names", async () => {
    const t = newBackend();
    await expectCode(t.mutation(internal.admin.createOrg, { name: "" }), "invalid_argument");
    const farm = await newFarm(t);
    const other = await newFarm(newBackend());
    await expectCode(t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "  " }), "invalid_argument");
    // an id of the same table that does not exist here
    await t.run(async (ctx) => await ctx.db.delete(farm.orgId));
    await expectCode(t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "k" }), "not_found");
    expect(other.orgId).toBeTruthy();
  });
});

describe("capabilities", () => {
  test("effective capabilities are the server's grant intersected with what the worker advertises now", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { allowed: ["cpu", "ollama:*"], capabilities: ["cpu"] });
    const submit = (requiredCapabilities: string[]) =>
      farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", requiredCapabilities });
    const gpuJob = await submit(["gpu"]);
    const llamaJob = await submit(["ollama:llama3"]);
    // advertises gpu, but the server never allowed it
    expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["gpu", "x"], max: 5 })).toEqual([]);
    // the wildcard grant allows any ollama model it advertises
    const claimed = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["cpu", "ollama:llama3", "x"], max: 5 });
    expect(claimed.map((c) => c.jobId)).toEqual([llamaJob]);
    const gpuView = await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId: gpuJob });
    expect(gpuView!.status).toBe("pending");
  });

  test("a job needing no capabilities runs on any worker that handles its type; one needing two needs both", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { allowed: ["a", "b"], capabilities: ["a", "b"] });
    const both = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", requiredCapabilities: ["b", "a"] });
    expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["a", "x"] })).toEqual([]);
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: ["a", "b", "x"] });
    expect(c.jobId).toBe(both);
    const anywhere = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
    const [d] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    expect(d.jobId).toBe(anywhere);
  });
});
