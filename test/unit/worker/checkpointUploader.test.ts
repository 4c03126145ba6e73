import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CheckpointUploader } from "../../../extension/worker/checkpointUploader";

function uploader(options: { fail?: (data: string) => Error | undefined } = {}) {
  const sent: Array<{ data: string; at: number }> = [];
  const errors: unknown[] = [];
  const up = new CheckpointUploader(
    (data) => {
      const problem = options.fail?.(data);
      if (problem) return Promise.reject(problem);
      sent.push({ data, at: Date.now() });
      return Promise.resolve();
    },
    { everyMs: 5_000, onError: (e) => errors.push(e) },
  );
  return { up, sent, errors };
}

describe("checkpoint uploads", () => {
  beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => vi.useRealTimers());

  it("sends the first at once, then at most one per interval, always the latest saved", async () => {
    const { up, sent } = uploader();
    up.save("AAAA");
    await vi.advanceTimersByTimeAsync(0);
    for (const data of ["AAAB", "AAAC", "AAAD"]) {
      up.save(data);
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(sent.map((s) => s.data)).toEqual(["AAAA"]);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(sent).toEqual([
      { data: "AAAA", at: 1_000_000 },
      { data: "AAAD", at: 1_005_000 },
    ]);
    await vi.advanceTimersByTimeAsync(20_000);
    expect(sent).toHaveLength(2);
  });

  it("flush sends what waits now; close drops it and sends nothing more", async () => {
    const { up, sent } = uploader();
    up.save("AAAA");
    up.save("BBBB");
    await vi.advanceTimersByTimeAsync(100);
    await up.flush();
    expect(sent.map((s) => s.data)).toEqual(["AAAA", "BBBB"]);
    await up.flush();
    expect(sent).toHaveLength(2);
    up.save("CCCC");
    up.close();
    await vi.advanceTimersByTimeAsync(10_000);
    await up.flush();
    up.save("DDDD");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sent.map((s) => s.data)).toEqual(["AAAA", "BBBB"]);
  });

  it("a failed upload is reported and the next saved checkpoint is still sent", async () => {
    const { up, sent, errors } = uploader({ fail: (data) => (data === "AAAA" ? new Error("offline") : undefined) });
    up.save("AAAA");
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toEqual([new Error("offline")]);
    up.save("BBBB");
    await vi.advanceTimersByTimeAsync(5_000);
    expect(sent.map((s) => s.data)).toEqual(["BBBB"]);
  });
});
