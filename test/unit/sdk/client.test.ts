import { describe, expect, it } from "vitest";
import { LIMITS } from "../../../convex/contract";
import { chunksOf, FarmhandClient, type Transport } from "../../../extension/sdk/client";
import { progressBar, submitSpecs } from "../../../extension/cli/submitter";

describe("farmhand/client", () => {
  it("chunks under both batch caps: job count and payload bytes, keeping order, adding the batch id", () => {
    const many = Array.from({ length: LIMITS.batchCount * 2 + 1 }, (_, i) => ({ type: "t", payload: i }));
    const byCount = [...chunksOf(many, "b")];
    expect(byCount.map((c) => c.length)).toEqual([LIMITS.batchCount, LIMITS.batchCount, 1]);
    expect(byCount.flat().map((s): unknown => s.payload)).toEqual(many.map((s) => s.payload));
    expect(byCount.flat().every((s) => s.batchId === "b")).toBe(true);
    const big = "x".repeat(200 * 1024);
    const heavy = Array.from({ length: 25 }, () => ({ type: "t", payload: big }));
    const byBytes = [...chunksOf(heavy)];
    expect(byBytes.length).toBeGreaterThan(2);
    for (const chunk of byBytes) expect(chunk.reduce((n, s) => n + JSON.stringify(s.payload).length, 0)).toBeLessThanOrEqual(LIMITS.batchPayloadBytes);
  });

  it("map keeps at most `window` jobs in flight and yields in input order", async () => {
    let submitted = 0;
    let maxOpen = 0;
    let open = 0;
    const listeners = new Map<string, (job: unknown) => void>();
    const transport = {
      mutation: (_ref: unknown, args: { jobs: Array<{ payload: number }> }) => {
        const ids = args.jobs.map((j) => `job${j.payload}`);
        submitted += ids.length;
        return Promise.resolve(ids);
      },
      onUpdate: (_ref: unknown, args: { jobId: string }, cb: (job: unknown) => void) => {
        open++;
        maxOpen = Math.max(maxOpen, open);
        listeners.set(args.jobId, cb);
        // jobs end out of order: odd ones later
        const n = Number(args.jobId.slice(3));
        setTimeout(() => cb({ jobId: args.jobId, status: "succeeded", result: n * 2 }), n % 2 ? 2 : 0);
        return () => {
          open--;
        };
      },
      query: () => Promise.resolve(null),
      close: () => Promise.resolve(),
    } as unknown as Transport;
    const client = new FarmhandClient({ client: transport, clientKey: "fh_c_test" });
    const out: unknown[] = [];
    function* payloads() {
      for (let i = 0; i < 1_000; i++) yield i;
    }
    for await (const r of client.map("t", payloads(), { window: 20 })) out.push(r);
    expect(out).toEqual(Array.from({ length: 1_000 }, (_, i) => i * 2));
    expect(submitted).toBe(1_000);
    expect(maxOpen).toBeLessThanOrEqual(30);
  });

  it("submitMany with seal: every chunk says seal, only the last one true; an empty list seals by jobs:sealBatch; no batch id is refused", async () => {
    const calls: Array<Record<string, unknown>> = [];
    const transport = {
      mutation: (_ref: unknown, args: Record<string, unknown>) => {
        calls.push(args);
        return Promise.resolve(Array.isArray(args.jobs) ? args.jobs.map((_, i) => `job${calls.length}.${i}`) : { sealed: true });
      },
      close: () => Promise.resolve(),
    } as unknown as Transport;
    const client = new FarmhandClient({ client: transport, clientKey: "fh_c_test" });
    const specs = Array.from({ length: LIMITS.batchCount * 2 + 1 }, (_, i) => ({ type: "t", payload: i }));
    const ids = await client.submitMany(specs, { batchId: "frames", seal: true });
    expect(ids).toHaveLength(specs.length);
    expect(calls.map((c) => c.seal)).toEqual([false, false, true]);
    expect(calls.every((c) => (c.jobs as Array<{ batchId: string }>).every((j) => j.batchId === "frames"))).toBe(true);
    calls.length = 0;
    await client.submitMany(specs.slice(0, 3), { batchId: "frames" });
    expect(calls.map((c) => "seal" in c)).toEqual([false]);
    calls.length = 0;
    await client.submitMany([], { batchId: "frames", seal: true });
    expect(calls).toEqual([{ clientKey: "fh_c_test", batchId: "frames" }]);
    await expect(client.submitMany(specs, { seal: true })).rejects.toThrow(RangeError);
  });

  it("submit and submitMany pass each job's externalId to the farm unchanged", async () => {
    const calls: Array<Record<string, unknown>> = [];
    const transport = {
      mutation: (_ref: unknown, args: Record<string, unknown>) => {
        calls.push(args);
        return Promise.resolve(Array.isArray(args.jobs) ? args.jobs.map(() => "j") : "j");
      },
      close: () => Promise.resolve(),
    } as unknown as Transport;
    const client = new FarmhandClient({ client: transport, clientKey: "fh_c_test" });
    await client.submit({ type: "t", externalId: "order-42" });
    await client.submitMany([{ type: "t", externalId: "a" }, { type: "t", externalId: "b" }]);
    expect(calls[0].externalId).toBe("order-42");
    expect((calls[1].jobs as Array<{ externalId: string }>).map((j) => j.externalId)).toEqual(["a", "b"]);
  });

  it("farmhand submit --external-id: one job takes the id; with --payloads the n-th payload takes <ID>:<n>; an empty id is refused", () => {
    expect(submitSpecs({ type: "t", "external-id": "run-9" }, [1], { many: false })).toEqual([{ type: "t", payload: 1, externalId: "run-9" }]);
    expect(submitSpecs({ type: "t", "external-id": "sweep" }, [1, 2, 3], { many: true }).map((s) => s.externalId)).toEqual(["sweep:1", "sweep:2", "sweep:3"]);
    expect(submitSpecs({ type: "t" }, [1, 2], { many: true }).every((s) => !("externalId" in s))).toBe(true);
    expect(() => submitSpecs({ type: "t", "external-id": " " }, [1], { many: false })).toThrow(/--external-id needs an id/);
  });

  it("a progress bar names done, total and failures", () => {
    expect(progressBar(5, 10, 0, 10)).toBe("[#####     ] 5/10");
    expect(progressBar(10, 10, 2, 10)).toBe("[##########] 10/10 (2 failed)");
  });
});
