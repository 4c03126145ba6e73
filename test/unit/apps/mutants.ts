// Mutations of well-formed modules for fuzzing what reads module bytes (the publish route, the worker's rewrite).
import { APP_LIMITS } from "../../../convex/core/appLimits";
import type { Rng } from "../../backend/sweep/prng";
import { closesStdio, echoStdin, prints, readsArgsAndEnviron, sleeper, tableBomb } from "./hostileApps";
import { u32 } from "./wasmBuilder";

/** Well-formed apps to mutate. */
export const SEED_MODULES = [prints('{"ok": 1}\n', "err\n"), echoStdin(), sleeper(1), tableBomb(10), readsArgsAndEnviron(), closesStdio()];

/** The section boundaries of a well-formed module: [id offset, size offset, content start, content end]. */
function sections(bytes: Uint8Array): Array<[number, number, number, number]> {
  const out: Array<[number, number, number, number]> = [];
  let at = 8;
  while (at < bytes.length) {
    const idAt = at++;
    let size = 0;
    let shift = 0;
    const sizeAt = at;
    for (;;) {
      const b = bytes[at++];
      size += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (!(b & 0x80)) break;
    }
    out.push([idAt, sizeAt, at, at + size]);
    at += size;
  }
  return out;
}

export type Mutation = (bytes: Uint8Array, rng: Rng) => Uint8Array;

export const MUTATIONS: Record<string, Mutation> = {
  "bit flips": (b, rng) => {
    const out = Uint8Array.from(b);
    for (let i = 1 + rng.int(8); i > 0; i--) out[rng.int(out.length)] ^= 1 << rng.int(8);
    return out;
  },
  truncation: (b, rng) => b.subarray(0, rng.int(b.length)),
  "huge declared size": (b, rng) => {
    const [, sizeAt, start, end] = rng.pick(sections(b));
    const huge = rng.pick([0xffffffff, 0x7fffffff, APP_LIMITS.moduleBytesMax + 1, 1 << 28]);
    return Uint8Array.from([...b.subarray(0, sizeAt), ...u32(huge), ...b.subarray(start, end), ...b.subarray(end)]);
  },
  "bad section length": (b, rng) => {
    const [, sizeAt, start, end] = rng.pick(sections(b));
    const size = Math.max(0, end - start + rng.pick([-3, -2, -1, 1, 2, 7, 100]));
    return Uint8Array.from([...b.subarray(0, sizeAt), ...u32(size), ...b.subarray(start)]);
  },
  "unknown or repeated section": (b, rng) => {
    const [idAt, , , end] = rng.pick(sections(b));
    const copy = b.subarray(idAt, end);
    const id = rng.chance(0.5) ? rng.int(256) : copy[0];
    return Uint8Array.from([...b.subarray(0, end), id, ...copy.subarray(1), ...b.subarray(end)]);
  },
  "huge count or LEB": (b, rng) => {
    const [, , start] = rng.pick(sections(b));
    const out = Uint8Array.from(b);
    // The first LEB in a section is its count: make it enormous, or a never-ending LEB.
    for (let i = 0; i < 5 && start + i < out.length; i++) out[start + i] = rng.chance(0.5) ? 0xff : 0x8f;
    return out;
  },
  "spliced bytes": (b, rng) => {
    const at = rng.int(b.length);
    const junk = Array.from({ length: 1 + rng.int(32) }, () => rng.int(256));
    return rng.chance(0.5) ? Uint8Array.from([...b.subarray(0, at), ...junk, ...b.subarray(at)]) : Uint8Array.from([...b.subarray(0, at), ...b.subarray(at + junk.length)]);
  },
};

