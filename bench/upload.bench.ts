import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { expect, test } from "vitest";
import { internal } from "../convex/_generated/api";
import { APP_LIMITS } from "../convex/core/appLimits";
import { buildModule, FD_WRITE, u32 } from "../test/unit/apps/wasmBuilder";
import { newFarm } from "../test/backend/setup";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/upload.bench.ts", "convex"];

/**
 * Memory of one `POST /api/apps/<name>` with a 20 MiB module (the largest allowed), run by convex-test in this
 * process: the body arrives as a stream of 64 KiB chunks (as a network request's does), and the process's live
 * JS heap plus its off-heap buffers (`heapUsed + external` right after a full collection) are sampled every
 * 2 ms while the HTTP action runs. The figure is the peak above what was in use before the call (the module's own source bytes
 * included in that baseline); the stored module is one copy of the body, so one copy is the floor.
 *
 * convex-test keeps stored files in this process and hashes each one from a full copy of it (Convex's storage
 * service does that outside the function): here its store call gets a Blob that hands its hasher no bytes,
 * so only the action's own copies are counted. The stored file's recorded sha256 is then not the module's,
 * which nothing in this benchmark reads.
 */

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const MiB = 1024 * 1024;

/** A valid app module padded with a custom section to exactly `size` bytes. */
function paddedModule(size: number): Uint8Array {
  const base = buildModule({ imports: [FD_WRITE] });
  const name = new TextEncoder().encode("pad");
  // section = id, LEB size, name length, name, padding; the LEB of the size takes 4 bytes at these sizes
  const padding = size - base.length - 1 - 4 - 1 - name.length;
  const content = 1 + name.length + padding;
  const header = [0, ...u32(content)];
  if (header.length !== 5) throw new Error("unexpected LEB length");
  const out = new Uint8Array(size);
  out.set(base, 0);
  out.set(header, base.length);
  out.set([name.length, ...name], base.length + header.length);
  return out;
}

function chunked(bytes: Uint8Array, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, Math.min(bytes.length, at + chunk))); // fresh buffers, as off the network
      at += chunk;
    },
  });
}

/** A Blob over the same bytes whose arrayBuffer() is empty: convex-test's hasher reads no copy of it. */
class UnhashedBlob extends Blob {
  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(new ArrayBuffer(0));
  }
}

type Syscalls = { syscall: unknown; asyncSyscall: unknown; jsSyscall: (op: string, args: Record<string, unknown>) => unknown };

/** Route convex-test's storage/storeBlob through UnhashedBlob; returns the undo. */
function storageOutsideTheProcess(): () => void {
  const holder = globalThis as unknown as { Convex: Syscalls };
  const real = holder.Convex;
  holder.Convex = {
    get syscall() {
      return real.syscall;
    },
    get asyncSyscall() {
      return real.asyncSyscall;
    },
    get jsSyscall() {
      const js = real.jsSyscall;
      return (op: string, args: Record<string, unknown>) => {
        if (op !== "storage/storeBlob") return js(op, args);
        const blob = args.blob as Blob;
        return js(op, { ...args, blob: new UnhashedBlob([blob], { type: blob.type }) });
      };
    },
  };
  return () => (holder.Convex = real);
}

const inUse = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};
const rss = () => process.memoryUsage().rss;

test("publishing a 20 MiB app module holds at most one copy of it", async () => {
  const farm = await newFarm();
  const { key } = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "publisher", canPublish: true });
  const module = paddedModule(APP_LIMITS.moduleBytesMax);
  const restore = storageOutsideTheProcess();
  const runs: number[] = [];
  const rssRuns: number[] = [];
  for (let i = 0; i < 3; i++) {
    gc();
    const baseline = inUse();
    const rssBaseline = rss();
    let peak = baseline;
    let rssPeak = rssBaseline;
    const sample = () => {
      gc(); // live memory only: garbage chunks waiting for a collection are not copies held
      peak = Math.max(peak, inUse());
      rssPeak = Math.max(rssPeak, rss());
    };
    const sampler = setInterval(sample, 2);
    const res = await farm.t.fetch(`/api/apps/big${i}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/wasm", "content-length": String(module.length) },
      body: chunked(module),
      duplex: "half",
    });
    sample();
    clearInterval(sampler);
    expect(res.status).toBe(200);
    runs.push((peak - baseline) / MiB);
    rssRuns.push((rssPeak - rssBaseline) / MiB);
  }
  restore();
  const worst = Math.round(Math.max(...runs) * 10) / 10;
  const rssWorst = Math.round(Math.max(...rssRuns) * 10) / 10;
  const figures: Record<string, Figure> = {
    publish_20MiB_peak_memory: { value: worst, unit: "MiB above baseline (worst of 3)", target: "≤ 30 (one copy of the 20 MiB body, plus slack)", pass: worst <= 30 },
    // the whole process, Blob stores included (Node keeps a Blob's bytes outside the JS heap); noisy, for reference
    publish_20MiB_peak_rss: { value: rssWorst, unit: "MiB above baseline (worst of 3)" },
  };
  saveFigures("upload", figures, MEASURES);
  expect(figures.publish_20MiB_peak_memory.pass).toBe(true);
});
