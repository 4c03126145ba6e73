import { readFileSync } from "node:fs";
import { inflateSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProcessPool } from "../../../extension/handlers/processPool";
import { fakeCtx } from "../handlers/fakeCtx";
import { appHarness } from "./harness";

// The example apps are build outputs: built here (or reused when up to date) with Debian's clang and rustc.
let built: Record<string, string>;
beforeAll(async () => {
  const { buildApps } = await import("../../../examples/apps/build.mjs");
  built = buildApps({ log: () => undefined });
}, 180_000);

const h = appHarness();
afterAll(() => h.close());
const publish = (name: string, options = {}) => h.publish(readFileSync(built[name]), { name, ...options });

/** CRC-32 as PNG computes it, written here so the test checks the app's encoder rather than trusting it. */
function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const b of bytes) {
    crc ^= b;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

describe("example app: mandelbrot (C)", { timeout: 30_000 }, () => {
  it("renders a tile as a valid PNG and reports progress", async () => {
    const run = await h.run(publish("mandelbrot"), { x: -0.5, y: 0, span: 3, width: 48, height: 32, maxIter: 100 });
    expect(run.ok ? run.progress.length : run.error.message).toBeGreaterThan(1);
    if (!run.ok) return;
    expect(run.progress.at(-1)).toEqual([1, "rendered 32 of 32 rows"]);
    const result = run.outcome.result as { width: number; height: number; png: string };
    expect(result).toMatchObject({ width: 48, height: 32, maxIter: 100 });
    const png = Buffer.from(result.png, "base64");
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const chunks: Array<{ type: string; data: Buffer }> = [];
    for (let at = 8; at < png.length; ) {
      const length = png.readUInt32BE(at);
      const typeAndData = png.subarray(at + 4, at + 8 + length);
      expect(png.readUInt32BE(at + 8 + length)).toBe(crc32(typeAndData));
      chunks.push({ type: typeAndData.subarray(0, 4).toString("latin1"), data: typeAndData.subarray(4) });
      at += 12 + length;
    }
    expect(chunks.map((c) => c.type)).toEqual(["IHDR", "IDAT", "IEND"]);
    const ihdr = chunks[0].data;
    expect([ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ihdr[8], ihdr[9]]).toEqual([48, 32, 8, 2]);
    // zlib checks the Adler-32 and the stored blocks' lengths.
    const raw = inflateSync(chunks[1].data);
    expect(raw.length).toBe(32 * (48 * 3 + 1));
    const centre = raw.subarray(16 * 145 + 1 + 24 * 3, 16 * 145 + 1 + 28 * 3); // x from -0.5 to -0.31, y = 0
    expect([...centre].every((b) => b === 0)).toBe(true); // points inside the set are black
    expect(new Set(raw).size).toBeGreaterThan(10);
  });

  it("fails a bad payload with its stderr message", async () => {
    const run = await h.run(publish("mandelbrot"), { width: 5000 });
    expect(run.ok).toBe(false);
    if (run.ok) return;
    expect(run.error.message).toContain("exited with code 2");
    expect(run.error.message).toContain("mandelbrot: width and height must be whole numbers from 1 to 2048");
  });

  it("its largest documented tile fits the farm's 256 KiB result cap; one pixel row wider is refused, naming the cap", async () => {
    const app = publish("mandelbrot");
    const largest = await h.run(app, { width: 255, height: 255, maxIter: 20 });
    expect(largest.ok ? JSON.stringify(largest.outcome.result).length : largest.error.message).toBeLessThanOrEqual(256 * 1024);
    const over = await h.run(app, { width: 256, height: 256, maxIter: 20 });
    expect(over.ok ? "rendered" : over.error.message).toContain("the PNG would pass the farm's 256 KiB result cap");
  });
});

describe("example app: montecarlo (Rust)", { timeout: 30_000 }, () => {
  const payload = { samples: 2_000_000, seed: 7, checkpointEvery: 500_000 };

  it("checkpoints, and a run resumed from a checkpoint ends exactly where an uninterrupted one does", async () => {
    const app = publish("montecarlo");
    const whole = await h.run(app, payload);
    expect(whole.ok).toBe(true);
    if (!whole.ok) return;
    expect(whole.checkpoints).toHaveLength(3);
    const full = whole.outcome.result as { samples: number; inside: number; pi: number; resumedFrom: number };
    expect(full).toMatchObject({ samples: 2_000_000, seed: 7, resumedFrom: 0 });
    expect(Math.abs(full.pi - Math.PI)).toBeLessThan(0.01);

    // Canceled after its second checkpoint (1,000,000 samples in)...
    const interrupted = await h.run(app, payload, undefined, 2);
    expect(interrupted.ok).toBe(false);
    expect(interrupted.checkpoints).toHaveLength(2);
    // ...the next run gets that checkpoint on stdin and continues from it.
    const resumed = await h.run(app, payload, interrupted.checkpoints[1]);
    expect(resumed.ok).toBe(true);
    if (!resumed.ok) return;
    expect(resumed.outcome.result).toEqual({ ...full, resumedFrom: 1_000_000 });
    expect(resumed.output).toContain("montecarlo: resuming after 1000000 of 2000000 samples");
    expect(resumed.checkpoints).toHaveLength(1);
    expect(resumed.outcome.checkpoint).toBe(resumed.checkpoints[0]);
  });

  it("refuses a checkpoint that is not its own", async () => {
    const run = await h.run(publish("montecarlo"), payload, Buffer.from("something else").toString("base64"));
    expect(!run.ok && run.error.message).toContain("the checkpoint is not one of this app's");
  });
});

describe("example app: primes (C)", { timeout: 30_000 }, () => {
  it("counts what demo.primes counts", async () => {
    const run = await h.run(publish("primes"), { n: 3_000_000 });
    expect(run.ok && run.outcome.result).toEqual({ n: 3_000_000, count: 216_816 });
    const pool = new ProcessPool({ niceness: 10 });
    try {
      expect(await pool.run({ builtin: "demo.primes" }, { n: 3_000_000 }, fakeCtx().ctx)).toEqual({ n: 3_000_000, count: 216_816 });
    } finally {
      pool.close();
    }
  });
});
