import { describe, expect, it } from "vitest";
import { appsHandler } from "../../../extension/handlers/apps/appsHandler";
import type { AppRunRequest } from "../../../extension/handlers/apps/appRunner";
import type { PoolRunContext } from "../../../extension/handlers/processPool";
import type { JobInput } from "../../../extension/worker/handler";
import { fakeCtx } from "../handlers/fakeCtx";

const APP = { name: "render", version: 2, sha256: "b".repeat(64), memoryMB: 64, timeoutMs: 1_000 };

describe("the apps handler", () => {
  it("offers the apps capability and runs the pinned version with the claimed checkpoint, passing saved ones on", async () => {
    const seen: Array<{ request: AppRunRequest; ctx: PoolRunContext }> = [];
    const handler = appsHandler({
      run: (request, ctx) => {
        seen.push({ request, ctx });
        ctx.onCheckpoint?.("Q0s=");
        return Promise.resolve({ result: { ok: 1 }, checkpoint: "Q0s=" });
      },
    });
    expect(handler.type).toBe("apps");
    expect(await handler.capabilities!()).toEqual(["apps"]);
    const saved: string[] = [];
    const f = fakeCtx();
    const result = await handler.run({ x: 1 }, { ...f.ctx, app: APP, checkpoint: "T0xE", saveCheckpoint: (d) => saved.push(d) });
    expect(result).toEqual({ ok: 1 });
    expect(seen[0].request).toEqual({ app: APP, payload: { x: 1 }, checkpoint: "T0xE" });
    expect(saved).toEqual(["Q0s="]);
  });

  it("hands a job with dependsOn its parents' results as `inputs` (none: no field)", async () => {
    const seen: AppRunRequest[] = [];
    const handler = appsHandler({ run: (request) => (seen.push(request), Promise.resolve({ result: null })) });
    const inputs = async function* () {
      yield await Promise.resolve({ jobId: "j1" as JobInput["jobId"], result: { n: 1 } });
      yield { jobId: "j2" as JobInput["jobId"], result: { n: 2 } };
    };
    await handler.run({ x: 1 }, { ...fakeCtx().ctx, app: APP, inputs });
    expect(seen[0]).toEqual({ app: APP, payload: { x: 1 }, inputs: [{ n: 1 }, { n: 2 }] });
  });

  it("refuses a job without a pin, not retryable", async () => {
    const handler = appsHandler({ run: () => Promise.reject(new Error("not reached")) });
    const error = (await handler.run({}, fakeCtx().ctx).catch((e: unknown) => e)) as Error & { retryable?: boolean };
    expect(error.message).toMatch(/names no app version/);
    expect(error.retryable).toBe(false);
  });
});
