// An app sees no environment (issue 26): the worker's variables (keys, tokens, paths) are the donor's, never the
// farm's. A real app asks WASI for its environment the way libc does, with environ_sizes_get and environ_get.
import { afterAll, describe, expect, it } from "vitest";
import { appHarness } from "./harness";
import { buildModule, FD_WRITE, op, type FuncImport } from "./wasmBuilder";

const ENVIRON_SIZES_GET: FuncImport = { name: "environ_sizes_get", params: ["i32", "i32"], results: ["i32"] };
const ENVIRON_GET: FuncImport = { name: "environ_get", params: ["i32", "i32"], results: ["i32"] };

const TEXT = 1024;
const COUNT_AT = 100; // environ_sizes_get writes the number of variables here…
const SIZE_AT = 104; // …and the bytes their "NAME=value\0" strings take here
const POINTERS = 8192; // environ_get writes one pointer per variable here…
const STRINGS = 65536; // …and the strings here (pages 1–3)

/** Instructions that write `value` (an i32 at `from`) as six decimal digits at `at`. */
function digits(from: number, at: number): number[] {
  return Array.from({ length: 6 }, (_, i) => [
    ...op.i32(at + 5 - i),
    ...op.i32(from), ...op.i32Load, ...op.i32(10 ** i), ...op.i32DivU, ...op.i32(10), ...op.i32RemU, ...op.i32(48), ...op.i32Add,
    ...op.i32Store8,
  ]).flat();
}

/**
 * Reads its whole environment, writes the strings to stderr, and answers how many variables it found and how many
 * bytes they took: {"count": "NNNNNN", "bytes": "NNNNNN"}.
 */
function readsItsEnvironment(): Uint8Array {
  const line = '{"count": "000000", "bytes": "000000"}\n';
  const countDigits = TEXT + line.indexOf("0");
  const bytesDigits = TEXT + line.lastIndexOf('"bytes": "') + '"bytes": "'.length;
  return buildModule({
    imports: [FD_WRITE, ENVIRON_SIZES_GET, ENVIRON_GET],
    memory: { min: 4 },
    data: [{ offset: TEXT, bytes: line }],
    start: [
      ...op.i32(COUNT_AT), ...op.i32(SIZE_AT), ...op.call(1), ...op.drop,
      ...op.i32(POINTERS), ...op.i32(STRINGS), ...op.call(2), ...op.drop,
      // stderr gets the strings themselves: iovec at 16 = (STRINGS, size)
      ...op.i32(16), ...op.i32(STRINGS), ...op.i32Store,
      ...op.i32(20), ...op.i32(SIZE_AT), ...op.i32Load, ...op.i32Store,
      ...op.i32(2), ...op.i32(16), ...op.i32(1), ...op.i32(24), ...op.call(0), ...op.drop,
      ...digits(COUNT_AT, countDigits),
      ...digits(SIZE_AT, bytesDigits),
      ...op.i32(16), ...op.i32(TEXT), ...op.i32Store,
      ...op.i32(20), ...op.i32(line.length), ...op.i32Store,
      ...op.i32(1), ...op.i32(16), ...op.i32(1), ...op.i32(24), ...op.call(0), ...op.drop,
    ],
  });
}

describe("an app's environment", { timeout: 30_000 }, () => {
  const h = appHarness();
  afterAll(() => h.close());

  it("is empty: an app that reads it through environ_sizes_get and environ_get finds no variable", async () => {
    const secret = "fh_w_env-secret-of-the-donor";
    process.env.FARMHAND_TEST_DONOR_SECRET = secret;
    try {
      const run = await h.run(h.publish(readsItsEnvironment()), null);
      expect(run.ok && run.outcome.result).toEqual({ count: "000000", bytes: "000000" });
      expect(run.output).not.toContain(secret);
      expect(run.output).not.toContain("PATH=");
    } finally {
      delete process.env.FARMHAND_TEST_DONOR_SECRET;
    }
  });
});
