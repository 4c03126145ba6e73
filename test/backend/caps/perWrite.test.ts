import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { LIMITS } from "../../../convex/core/limits";
import { bytesPerWrite, PER_WRITE_TARGET_BYTES } from "./perWrite";

// An offer, a lease, a heartbeat and a progress report write only the job's small row (and their own small
// rows), never its body: under 4 KiB each, the same for a 256 KiB payload as for an empty one.

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

test("bytes written per offer, lease, heartbeat and progress report stay under 4 KiB whatever the payload's size", async () => {
  const small = await bytesPerWrite(16);
  const big = await bytesPerWrite(LIMITS.payloadBytes);
  console.log(`bytes written, small payload ${JSON.stringify(small)}; 256 KiB payload ${JSON.stringify(big)}`);
  for (const figures of [small, big]) {
    for (const bytes of Object.values(figures)) expect(bytes).toBeLessThan(PER_WRITE_TARGET_BYTES);
  }
  // the payload's size does not show in any of them
  for (const key of Object.keys(big) as Array<keyof typeof big>) expect(Math.abs(big[key] - small[key])).toBeLessThan(64);
});
