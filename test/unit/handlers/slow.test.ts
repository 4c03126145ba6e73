import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { slow } from "../../../extension/handlers/impl/slow";
import type { ImplContext } from "../../../extension/handlers/protocol";
import { HandlerError } from "../../../extension/worker/errors";
import { fakeCtx } from "./fakeCtx";

function implCtx(checkpoint?: string) {
  const f = fakeCtx();
  const saved: string[] = [];
  const ctx: ImplContext = { ...f.ctx, ...(checkpoint === undefined ? {} : { checkpoint }), saveCheckpoint: (d) => void saved.push(d), setCpuMs: () => undefined };
  return { ...f, ctx, saved };
}
const step = (n: number) => Buffer.from(String(n)).toString("base64");

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("demo.slow (the demo's job to watch: progress, suspension, resume)", () => {
  it("takes one second per step, reporting progress and keeping a checkpoint after each", async () => {
    const f = implCtx();
    const run = slow({ seconds: 3 }, f.ctx);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(f.progress).toEqual([
      [1 / 3, "step 1 of 3"],
      [2 / 3, "step 2 of 3"],
    ]);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(run).resolves.toEqual({ seconds: 3, resumedAt: 0 });
    expect(f.saved).toEqual([step(1), step(2), step(3)]);
  });

  it("resumes from its checkpoint on another machine, and says so", async () => {
    const f = implCtx(step(2));
    const run = slow({ seconds: 3 }, f.ctx);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(run).resolves.toEqual({ seconds: 3, resumedAt: 2 });
    expect(f.progress).toEqual([[1, "step 3 of 3 (resumed at 2)"]]);
    // a checkpoint it could not have written starts over
    const odd = implCtx(step(9));
    const again = slow({ seconds: 1 }, odd.ctx);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(again).resolves.toEqual({ seconds: 1, resumedAt: 0 });
  });

  it("stops at once when aborted (canceled or given back)", async () => {
    const f = implCtx();
    const run = slow({ seconds: 60 }, f.ctx);
    const outcome = expect(run).rejects.toBeDefined();
    await vi.advanceTimersByTimeAsync(1_500);
    f.controller.abort("stop");
    await outcome;
    expect(f.progress).toHaveLength(1);
  });

  it.each([[undefined], [{}], [{ seconds: 0 }], [{ seconds: 1.5 }], [{ seconds: 3_601 }], [{ seconds: "5" }]])("refuses %j, not retryable", async (payload) => {
    const error = await slow(payload, implCtx().ctx).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HandlerError);
    expect((error as HandlerError).retryable).toBe(false);
    expect((error as Error).message).toMatch(/demo.slow needs a payload \{ seconds: whole number from 1 to 3600 \}/);
  });
});
