import { createHash, randomBytes } from "node:crypto";
import { expect, test } from "vitest";
import { Sha256 } from "../../convex/core/sha256";

const reference = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

test("the incremental SHA-256 matches node:crypto at every padding edge, fed whole or in odd pieces", () => {
  for (const size of [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096 + 7]) {
    const bytes = randomBytes(size);
    expect(new Sha256().update(bytes).hex(), `size ${size}`).toBe(reference(bytes));
    const pieces = new Sha256();
    for (let at = 0; at < size; at += 13) pieces.update(bytes.subarray(at, at + 13));
    expect(pieces.hex(), `size ${size} in pieces`).toBe(reference(bytes));
  }
  expect(new Sha256().update(new TextEncoder().encode("abc")).hex()).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});
