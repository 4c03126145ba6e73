// One suite for the one WebAssembly reader (convex/apps/wasmBinary.ts): every module goes through the publish check
// (read in one-byte chunks, as a slow upload arrives) and through the runner's preparation (the memory and table
// rewrite) followed by compiling, and the two must agree: publish accepts ⇔ the runner rewrites and compiles it,
// and a refusal names the same problem on both sides.
import { describe, expect, it } from "vitest";
import { prepareAppModule, WasmModuleError } from "../../../convex/contract";
import { inspectAppModule, pagesForMegabytes, TABLE_ELEMENTS_MAX } from "../../../convex/apps/appsWasm";
import { seededRng, sweepSeed } from "../../backend/sweep/prng";
import { importsUnknownWasi, tableBomb } from "./hostileApps";
import { MUTATIONS, SEED_MODULES } from "./mutants";
import { buildModule, FD_WRITE, op, u32 } from "./wasmBuilder";

type Verdict = { ok: true } | { ok: false; problem: string };

function chunks(bytes: Uint8Array, size: number) {
  let at = 0;
  return () => Promise.resolve(at < bytes.length ? bytes.subarray(at, (at += size)) : null);
}

async function publishSide(bytes: Uint8Array, memoryMB: number): Promise<Verdict> {
  return await inspectAppModule(chunks(bytes, 1), memoryMB);
}

/** The runner's verdict; a module it prepared that does not compile comes back as the CompileError. */
async function runnerSide(bytes: Uint8Array, memoryMB: number): Promise<Verdict | { compileError: string }> {
  let prepared: Uint8Array;
  try {
    prepared = await prepareAppModule(bytes, memoryMB);
  } catch (e) {
    if (e instanceof WasmModuleError) return { ok: false, problem: e.message };
    throw e;
  }
  try {
    await WebAssembly.compile(prepared);
    return { ok: true };
  } catch (e) {
    if (e instanceof WebAssembly.CompileError) return { compileError: e.message };
    throw e;
  }
}

// A minimal app written section by section, so single sections can be replaced by malformed ones.
const name = (s: string) => [...u32(new TextEncoder().encode(s).length), ...new TextEncoder().encode(s)];
const vec = (items: number[][]) => [...u32(items.length), ...items.flat()];
const section = (id: number, content: number[]) => [id, ...u32(content.length), ...content];
const HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
const TYPES = section(1, vec([[0x60, 0x00, 0x00]]));
const FUNCTIONS = section(3, vec([[0x00]]));
const EXPORTS = section(7, vec([[...name("_start"), 0x00, 0x00], [...name("memory"), 0x02, 0x00]]));
const CODE = section(10, vec([[0x02, 0x00, 0x0b]]));
const memorySection = (...limits: number[][]) => section(5, vec(limits));
const tableSection = (...tables: number[][]) => section(4, vec(tables));

type Parts = { imports?: number[]; functions?: number[]; tables?: number[]; memory?: number[]; exports?: number[]; code?: number[]; after?: number[] };
function app(parts: Parts = {}): Uint8Array {
  return Uint8Array.from([
    ...HEADER,
    ...TYPES,
    ...(parts.imports ?? []),
    ...(parts.functions ?? FUNCTIONS),
    ...(parts.tables ?? []),
    ...(parts.memory ?? memorySection([0x00, 0x01])),
    ...(parts.exports ?? EXPORTS),
    ...(parts.code ?? CODE),
    ...(parts.after ?? []),
  ]);
}
const importSection = (module: string, field: string, kind: number, ...desc: number[]) => section(2, vec([[...name(module), ...name(field), kind, ...desc]]));

const ACCEPTED: Array<[string, Uint8Array, number?]> = [
  ["the smallest app", app()],
  ["an app that imports a WASI function", buildModule({ imports: [FD_WRITE] })],
  ["an app that imports a WASI function this runner lacks (a link error later, not a malformed module)", importsUnknownWasi()],
  ["a declared maximum", app({ memory: memorySection([0x01, 0x01, 0x04]) })],
  ["a maximum over the 4 GiB a 32-bit memory allows (the cap replaces it)", app({ memory: memorySection([0x01, 0x01, ...u32(70_000)]) })],
  ["zero pages, maximum zero", app({ memory: memorySection([0x01, 0x00, 0x00]) })],
  ["exactly memoryMB at start", app({ memory: memorySection([0x00, 16]) }), 1],
  ["a shared memory with a maximum", app({ memory: memorySection([0x03, 0x01, 0x04]) })],
  ["a shared memory without a maximum (the cap gives it one)", app({ memory: memorySection([0x02, 0x01]) })],
  ["a funcref table without a maximum", app({ tables: tableSection([0x70, 0x00, 0x01]) })],
  ["an externref table with a maximum", app({ tables: tableSection([0x6f, 0x01, 0x01, 0x08]) })],
  [`a table of exactly ${TABLE_ELEMENTS_MAX}`, app({ tables: tableSection([0x70, 0x00, ...u32(TABLE_ELEMENTS_MAX)]) })],
  ["a custom section", app({ after: section(0, [...name("producers"), 1, 2, 3]) })],
  ["a padded (non-minimal) LEB128 section size", Uint8Array.from([...HEADER, ...TYPES, ...FUNCTIONS, 5, 0x83, 0x80, 0x80, 0x00, 1, 0x00, 0x01, ...EXPORTS, ...CODE])],
  ["data and a table from the builder", buildModule({ imports: [FD_WRITE], table: { min: 2 }, data: [{ offset: 0, bytes: "hi" }] })],
  ["the table bomb (table.grow happens at run time)", tableBomb(TABLE_ELEMENTS_MAX)],
];

const REFUSED: Array<[string, Uint8Array, RegExp, number?]> = [
  ["no bytes", new Uint8Array(0), /cut short: the magic number/],
  ["a shell script", new TextEncoder().encode("#!/bin/sh\necho hi\n"), /does not start with \\0asm/],
  ["a component (version 0x0d)", Uint8Array.from([0, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]), /binary version is not 1/],
  ["a section size past the end", Uint8Array.from([...HEADER, ...TYPES, 5, 10, 1, 0, 1]), /cut short: section 5/],
  ["a section size LEB128 of six bytes", Uint8Array.from([...HEADER, 1, 0xff, 0xff, 0xff, 0xff, 0x7f]), /a section size is not a valid 32-bit LEB128/],
  ["a memory size LEB128 with bits past 32", app({ memory: memorySection([0x00, 0x80, 0x80, 0x80, 0x80, 0x10]) }), /initial size is not a valid 32-bit LEB128/],
  ["an import name longer than its section", app({ imports: [2, 4, 1, 0x7f, 0x61, 0x62] }), /cut short: an import's module name/],
  ["an export name longer than its section", app({ exports: section(7, [1, ...u32(1 << 20), 0x61]) }), /cut short: an export's name/],
  ["an export name that is not UTF-8", app({ exports: section(7, vec([[1, 0xff, 0x00, 0x00], [...name("memory"), 0x02, 0x00]])) }), /an export's name is not valid UTF-8/],
  ["the same export twice", app({ exports: section(7, vec([[...name("_start"), 0x00, 0x00], [...name("memory"), 0x02, 0x00], [...name("memory"), 0x02, 0x00]])) }), /exports "memory" twice/],
  ["two memory sections", app({ memory: [...memorySection([0x00, 0x01]), ...memorySection([0x00, 0x01])] }), /section 5 is out of order or repeated/],
  ["two memories in one section", app({ memory: memorySection([0x00, 0x01], [0x00, 0x01]) }), /defines 2 memories; an app has exactly one/],
  ["sections out of order", app({ after: FUNCTIONS }), /section 3 is out of order or repeated/],
  ["an unknown section id", app({ after: section(14, [0]) }), /unknown section id 14/],
  ["a memory section with trailing bytes", app({ memory: section(5, [1, 0x00, 0x01, 0x00]) }), /section 5 has trailing bytes/],
  ["a custom section whose name runs past it", app({ after: section(0, [9, 0x61]) }), /cut short: a custom section's name/],
  ["memory64", app({ memory: memorySection([0x04, 0x01]) }), /64-bit memories are not supported/],
  ["unknown memory flags", app({ memory: memorySection([0x08, 0x01]) }), /unknown memory limits flags 0x8/],
  ["a memory maximum below its initial size", app({ memory: memorySection([0x01, 0x04, 0x02]) }), /memory's maximum size 2 is below its initial size 4/],
  ["more memory at start than memoryMB", app({ memory: memorySection([0x00, 17]) }), /needs 1.1 MB of memory at start, more than its memoryMB of 1/, 1],
  [`a table over ${TABLE_ELEMENTS_MAX}`, app({ tables: tableSection([0x70, 0x00, ...u32(TABLE_ELEMENTS_MAX + 1)]) }), /declares a table of 100001 elements; at most 100000/],
  ["a 64-bit table", app({ tables: tableSection([0x70, 0x04, 0x01]) }), /64-bit tables are not supported/],
  ["a shared table", app({ tables: tableSection([0x70, 0x03, 0x01, 0x02]) }), /unknown table limits flags 0x3/],
  ["a table maximum below its initial size", app({ tables: tableSection([0x70, 0x01, 0x04, 0x02]) }), /table's maximum size 2 is below its initial size 4/],
  ["a table with an initializer expression", app({ tables: tableSection([0x40, 0x00, 0x70, 0x00, 0x01, 0xd0, 0x70, 0x0b]) }), /initializer expressions are not supported/],
  ["a table of an unknown element type", app({ tables: tableSection([0x7f, 0x00, 0x01]) }), /unsupported table element type 0x7f/],
  ["an env function import", buildModule({ imports: [{ module: "env", name: "f", params: [], results: [] }] }), /imports "env.f"; an app may import only wasi_snapshot_preview1 functions/],
  // An imported memory or table would escape the caps the runner writes into the module's own: refused whole.
  ["an imported memory", buildModule({ imports: [FD_WRITE], memory: { min: 1, imported: true, exported: false } }), /imports "env.memory"/],
  ["an imported table", buildModule({ table: { min: 1, imported: true } }), /imports "env.table"/],
  ["a WASI memory import", app({ imports: importSection("wasi_snapshot_preview1", "memory", 0x02, 0x00, 0x01) }), /imports "wasi_snapshot_preview1.memory"/],
  ["a global import", app({ imports: importSection("wasi_snapshot_preview1", "g", 0x03, 0x7f, 0x00) }), /imports "wasi_snapshot_preview1.g"/],
  ["an unknown import kind", app({ imports: importSection("wasi_snapshot_preview1", "x", 0x09) }), /unknown import kind 9/],
  ["no memory", app({ memory: [], exports: section(7, vec([[...name("_start"), 0x00, 0x00]])) }), /defines no memory/],
  ["a memory not exported", buildModule({ memory: { min: 1, exported: false } }), /exports no memory named "memory"/],
  ["no _start", buildModule({ exportStart: false }), /exports no _start function/],
  ["a _start that is not a function", app({ exports: section(7, vec([[...name("_start"), 0x02, 0x00], [...name("memory"), 0x02, 0x00]])) }), /exports no _start function/],
  ["more functions than bodies", app({ functions: section(3, vec([[0x00], [0x00]])) }), /declares 2 functions but has 1 bodies/],
  ["a code section with trailing bytes", app({ code: section(10, [1, 2, 0x00, 0x0b, 0x00]) }), /the code section has trailing bytes/],
];

describe("an app module, judged by the publish check and the runner alike", () => {
  it.each(ACCEPTED)("accepts %s: published, rewritten and compiled", async (_label, bytes, memoryMB = 16) => {
    expect(await publishSide(bytes, memoryMB)).toEqual({ ok: true });
    expect(await runnerSide(bytes, memoryMB)).toEqual({ ok: true });
  });

  it.each(REFUSED)("refuses %s on both sides with the same problem", async (_label, bytes, problem, memoryMB = 16) => {
    const published = await publishSide(bytes, memoryMB);
    expect(published).toEqual({ ok: false, problem: expect.stringMatching(problem) as unknown });
    expect(await runnerSide(bytes, memoryMB)).toEqual(published);
  });

  it("refuses every truncation of a valid app on both sides, but the one without its last (optional) section", async () => {
    const withoutData = buildModule({ imports: [FD_WRITE], table: { min: 1 } });
    const whole = buildModule({ imports: [FD_WRITE], table: { min: 1 }, data: [{ offset: 0, bytes: "hi" }] });
    for (let length = 0; length < whole.length; length++) {
      const cut = whole.subarray(0, length);
      const published = await publishSide(cut, 16);
      expect(published, `cut at ${length}`).toMatchObject({ ok: length === withoutData.length });
      expect(await runnerSide(cut, 16), `cut at ${length}`).toEqual(published);
    }
  });

  const SEED = sweepSeed(19_020);
  it(`2000 mutants of real apps: both sides give the same verdict; what is prepared compiles unless its code is bad (seed ${SEED})`, async () => {
    const rng = seededRng(SEED);
    const names = Object.keys(MUTATIONS);
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 2_000; i++) {
      const how = names[i % names.length];
      const bytes = MUTATIONS[how](SEED_MODULES[rng.int(SEED_MODULES.length)], rng);
      const label = `mutant ${i} (${how}, seed ${SEED})`;
      const published = await inspectAppModule(chunks(bytes, 1 + rng.int(64)), 64);
      const run = await runnerSide(bytes, 64);
      // The publish check does not validate code: a mutant with a broken function body passes it and fails to compile.
      const outcome = "compileError" in run ? "CompileError" : run.ok ? "compiled" : "refused";
      expect(outcome === "refused" ? run : published, label).toEqual(outcome === "refused" ? published : { ok: true });
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    expect([...outcomes.keys()].sort()).toEqual(["CompileError", "compiled", "refused"]);
  }, 120_000);
});

describe("the runner's rewrite", () => {
  const instance = async (bytes: Uint8Array, memoryMB: number) => new WebAssembly.Instance(new WebAssembly.Module(await prepareAppModule(bytes, memoryMB)), {});
  const memoryOf = async (bytes: Uint8Array, memoryMB: number) => (await instance(bytes, memoryMB)).exports.memory as WebAssembly.Memory;

  it("gives a memory without a maximum memoryMB as its maximum, so growing past it fails inside the module", async () => {
    const memory = await memoryOf(buildModule({ memory: { min: 2 } }), 1);
    expect(memory.grow(14)).toBe(2);
    expect(() => memory.grow(1)).toThrow(RangeError);
    expect(memory.buffer.byteLength).toBe(1024 * 1024);
  });

  it("lowers a larger declared maximum and keeps a smaller one", async () => {
    const lowered = await memoryOf(buildModule({ memory: { min: 1, max: 100 } }), 1);
    expect(() => lowered.grow(16)).toThrow(RangeError);
    expect(lowered.grow(15)).toBe(1);
    const kept = await memoryOf(buildModule({ memory: { min: 1, max: 4 } }), 1);
    expect(() => kept.grow(4)).toThrow(RangeError);
    expect(kept.grow(3)).toBe(1);
  });

  it("changes nothing but the limits: every other section is copied byte for byte, a shared memory stays shared", async () => {
    const spec = { imports: [FD_WRITE], data: [{ offset: 0, bytes: "hi" }], start: [...op.i32(0), ...op.drop] };
    const original = buildModule({ ...spec, memory: { min: 2 }, table: { min: 3 } });
    expect(await prepareAppModule(original, 1)).toEqual(buildModule({ ...spec, memory: { min: 2, max: 16 }, table: { min: 3, max: TABLE_ELEMENTS_MAX } }));
    const alreadyCapped = buildModule({ ...spec, memory: { min: 1, max: 4 }, table: { min: 3, max: 5 } });
    expect(await prepareAppModule(alreadyCapped, 1)).toEqual(alreadyCapped);
    const shared = app({ memory: memorySection([0x02, 0x01]) });
    expect(await prepareAppModule(shared, 1)).toEqual(app({ memory: memorySection([0x03, 0x01, 16]) }));
  });

  it(`caps tables: one without a maximum gets ${TABLE_ELEMENTS_MAX}, table.grow past it answers -1; a smaller maximum stays`, async () => {
    // _start grows the table by `delta` and stores the answer at address 0.
    const grower = (delta: number, table: { min: number; max?: number }) =>
      buildModule({ table, start: [...op.i32(0), ...op.tableGrowNull(op.i32(delta)), ...op.i32Store] });
    const answerOf = (instance: WebAssembly.Instance) => {
      (instance.exports._start as () => void)();
      return new Int32Array((instance.exports.memory as WebAssembly.Memory).buffer)[0];
    };
    expect(answerOf(new WebAssembly.Instance(new WebAssembly.Module(grower(TABLE_ELEMENTS_MAX, { min: 1 })), {}))).toBe(1); // uncapped, it grows
    expect(answerOf(await instance(grower(TABLE_ELEMENTS_MAX, { min: 1 }), 1))).toBe(-1);
    expect(answerOf(await instance(grower(TABLE_ELEMENTS_MAX - 1, { min: 1 }), 1))).toBe(1);
    expect(answerOf(await instance(grower(5, { min: 1, max: 4 }), 1))).toBe(-1);
  });

  it("converts megabytes to pages", () => {
    expect(pagesForMegabytes(1)).toBe(16);
    expect(pagesForMegabytes(2048)).toBe(32768);
  });
});
