import { describe, expect, it } from "vitest";
import { checkCheckpoint, MAX_CHECKPOINT_BYTES } from "../../../extension/handlers/checkpoint";

describe("checkCheckpoint", () => {
  it("accepts padded standard base64 up to 512 KiB decoded", () => {
    expect(MAX_CHECKPOINT_BYTES).toBe(512 * 1024);
    for (const n of [0, 1, 2, 3, MAX_CHECKPOINT_BYTES - 1, MAX_CHECKPOINT_BYTES]) {
      const data = Buffer.alloc(n, 7).toString("base64");
      expect(checkCheckpoint(data)).toBe(data);
    }
  });

  it("refuses a bigger one, and anything that is not base64, as not retryable", () => {
    for (const n of [MAX_CHECKPOINT_BYTES + 1, MAX_CHECKPOINT_BYTES + 3, 10 * MAX_CHECKPOINT_BYTES]) {
      expect(() => checkCheckpoint(Buffer.alloc(n).toString("base64"))).toThrow(
        expect.objectContaining({ message: expect.stringContaining("checkpoint too big") as unknown, retryable: false }),
      );
    }
    expect(() => checkCheckpoint(Buffer.alloc(MAX_CHECKPOINT_BYTES + 1).toString("base64"))).toThrow(
      "checkpoint too big: 524289 bytes decoded; a checkpoint may hold at most 524288 bytes (512 KiB)",
    );
    for (const bad of ["AAE", "AA==AA==", "a-b_", "not base64!", 42, null]) {
      expect(() => checkCheckpoint(bad)).toThrow(expect.objectContaining({ retryable: false }));
    }
  });
});
