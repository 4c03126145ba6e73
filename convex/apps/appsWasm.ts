/**
 * What makes a module an app, judged the same way when it is published (without compiling it: the Convex runtime
 * is not promised to offer WebAssembly) and when a worker runs it (through convex/contract.ts, before compiling):
 * a WASI command that imports only `wasi_snapshot_preview1` functions, defines one memory that fits its
 * `memoryMB` at start, exports `_start` and `memory`, and holds no table over TABLE_ELEMENTS_MAX. Code is not
 * validated here: a module whose code is invalid fails to compile on the worker, without retry.
 */
import { readModule, rewriteLimits, WASM_PAGE_BYTES, WasmModuleError, type ChunkSupply, type ModuleShape } from "./wasmBinary";

export { WasmModuleError };

const WASI_MODULE = "wasi_snapshot_preview1";

/**
 * Elements any table may hold. A table declared without a maximum could otherwise be grown (`table.grow`) to
 * V8's limit of ten million entries, 80 MB of the donor's memory that no memory cap counts; real programs' tables
 * hold one entry per function called indirectly, some thousands at most.
 */
export const TABLE_ELEMENTS_MAX = 100_000;

/** Pages that fit in `megabytes` MiB. */
export function pagesForMegabytes(megabytes: number): number {
  return Math.floor((megabytes * 1024 * 1024) / WASM_PAGE_BYTES);
}

/** The publish check: why these bytes cannot be an app with `memoryMB`, or ok. Errors of the supply propagate. */
export async function inspectAppModule(supply: ChunkSupply, memoryMB: number): Promise<{ ok: true } | { ok: false; problem: string }> {
  try {
    checkApp(await readModule(supply), memoryMB);
    return { ok: true };
  } catch (e) {
    if (e instanceof WasmModuleError) return { ok: false, problem: e.message };
    throw e;
  }
}

/**
 * The runner's preparation: the same check, then the module with its memory's maximum capped at `memoryMB` and its
 * tables' at TABLE_ELEMENTS_MAX, so `memory.grow` or `table.grow` past them fails inside the module (it sees -1,
 * malloc sees NULL) and the donor's machine never notices. Throws WasmModuleError.
 */
export async function prepareAppModule(bytes: Uint8Array, memoryMB: number): Promise<Uint8Array> {
  let supplied = false;
  const shape = await readModule(() => Promise.resolve(supplied ? null : ((supplied = true), bytes)));
  checkApp(shape, memoryMB);
  return rewriteLimits(bytes, shape, pagesForMegabytes(memoryMB), TABLE_ELEMENTS_MAX);
}

function checkApp(shape: ModuleShape, memoryMB: number): void {
  const foreign = shape.imports.find((i) => i.module !== WASI_MODULE || i.kind !== "func");
  if (foreign) throw new WasmModuleError(`the module imports "${foreign.module}.${foreign.field}"; an app may import only ${WASI_MODULE} functions`);
  const [memory, ...more] = shape.memories;
  if (!memory) throw new WasmModuleError('the module defines no memory (an app exports its own memory as "memory")');
  if (more.length) throw new WasmModuleError(`the module defines ${shape.memories.length} memories; an app has exactly one`);
  if (memory.initial > pagesForMegabytes(memoryMB)) {
    throw new WasmModuleError(`the module needs ${megabytes(memory.initial)} MB of memory at start, more than its memoryMB of ${memoryMB}`);
  }
  const big = shape.tables.find((t) => t.limits.initial > TABLE_ELEMENTS_MAX);
  if (big) throw new WasmModuleError(`the module declares a table of ${big.limits.initial} elements; at most ${TABLE_ELEMENTS_MAX} are allowed`);
  if (!shape.exports.some((e) => e.name === "_start" && e.kind === "func")) {
    throw new WasmModuleError("the module exports no _start function: build it as a WASI command (a program with main)");
  }
  if (!shape.exports.some((e) => e.name === "memory" && e.kind === "memory")) throw new WasmModuleError('the module exports no memory named "memory"');
}

function megabytes(pages: number): number {
  return Math.round(((pages * WASM_PAGE_BYTES) / 1024 / 1024) * 10) / 10;
}
