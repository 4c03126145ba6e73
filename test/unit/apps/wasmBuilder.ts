// A tiny WebAssembly assembler for test modules: WASI imports, one memory, data segments and a `_start` body
// written as instruction bytes. Enough for hostile apps (endless loops, memory bombs, traps) without a toolchain.

export type ValType = "i32" | "i64";
export type FuncImport = { module?: string; name: string; params: ValType[]; results: ValType[] };
export type ModuleSpec = {
  imports?: FuncImport[];
  /** Pages; `max` omitted means no declared maximum. `imported` makes it an import `env.memory`. */
  memory?: { min: number; max?: number; imported?: boolean; exported?: boolean };
  data?: Array<{ offset: number; bytes: Uint8Array | string }>;
  /** A funcref table (no maximum when `max` is omitted), declared or imported as `env.table`. */
  table?: { min: number; max?: number; imported?: boolean };
  /** Local variables of `_start` (all i32). */
  locals?: number;
  /** The body of `_start`, without the final `end`. */
  start?: number[];
  /** Export `_start` (default true). */
  exportStart?: boolean;
};

const VALTYPE: Record<ValType, number> = { i32: 0x7f, i64: 0x7e };

export function u32(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

function s64(value: bigint): number[] {
  const out: number[] = [];
  let v = value;
  for (;;) {
    const b = Number(v & 0x7fn);
    v >>= 7n;
    const done = (v === 0n && !(b & 0x40)) || (v === -1n && b & 0x40);
    out.push(done ? b : b | 0x80);
    if (done) return out;
  }
}

const bytesOf = (s: string | Uint8Array) => (typeof s === "string" ? new TextEncoder().encode(s) : s);
const name = (s: string) => [...u32(bytesOf(s).length), ...bytesOf(s)];
const vec = (items: number[][]) => [...u32(items.length), ...items.flat()];
const section = (id: number, content: number[]) => [id, ...u32(content.length), ...content];

/** Instructions, as bytes. */
export const op = {
  i32: (n: number) => [0x41, ...s64(BigInt(n | 0))],
  i64: (n: bigint) => [0x42, ...s64(n)],
  call: (index: number) => [0x10, ...u32(index)],
  localGet: (i: number) => [0x20, ...u32(i)],
  localSet: (i: number) => [0x21, ...u32(i)],
  localTee: (i: number) => [0x22, ...u32(i)],
  drop: [0x1a],
  unreachable: [0x00],
  loop: [0x03, 0x40],
  block: [0x02, 0x40],
  if: [0x04, 0x40],
  end: [0x0b],
  br: (depth: number) => [0x0c, ...u32(depth)],
  brIf: (depth: number) => [0x0d, ...u32(depth)],
  return: [0x0f],
  i32Eq: [0x46],
  i32Eqz: [0x45],
  i32Add: [0x6a],
  i32Mul: [0x6c],
  i32DivU: [0x6e],
  i32RemU: [0x70],
  i32Load: [0x28, 0x02, 0x00],
  i32Load8U: [0x2d, 0x00, 0x00],
  i32Store: [0x36, 0x02, 0x00],
  i32Store8: [0x3a, 0x00, 0x00],
  i64Store: [0x37, 0x03, 0x00],
  i32LeU: [0x4d],
  tableSize: [0xfc, 0x10, 0x00],
  memoryGrow: [0x40, 0x00],
  /** table.grow on table 0, filling with null: expects the delta (i32) on the stack; leaves the old size or -1. */
  tableGrowNull: (delta: number[]) => [0xd0, 0x70, ...delta, 0xfc, 0x0f, 0x00],
  memorySize: [0x3f, 0x00],
};

export function buildModule(spec: ModuleSpec): Uint8Array {
  const imports = spec.imports ?? [];
  const types: number[][] = imports.map((f) => [0x60, ...vec(f.params.map((p) => [VALTYPE[p]])), ...vec(f.results.map((r) => [VALTYPE[r]]))]);
  types.push([0x60, 0x00, 0x00]); // _start: () -> ()
  const startType = types.length - 1;
  const importEntries = imports.map((f, i) => [...name(f.module ?? "wasi_snapshot_preview1"), ...name(f.name), 0x00, ...u32(i)]);
  const memory = spec.memory ?? { min: 1 };
  const limits = memory.max === undefined ? [0x00, ...u32(memory.min)] : [0x01, ...u32(memory.min), ...u32(memory.max)];
  if (memory.imported) importEntries.push([...name("env"), ...name("memory"), 0x02, ...limits]);
  const table = spec.table;
  const tableType = table ? [0x70, ...(table.max === undefined ? [0x00, ...u32(table.min)] : [0x01, ...u32(table.min), ...u32(table.max)])] : [];
  if (table?.imported) importEntries.push([...name("env"), ...name("table"), 0x01, ...tableType]);
  const startIndex = imports.length;
  const exports: number[][] = [];
  if (spec.exportStart !== false) exports.push([...name("_start"), 0x00, ...u32(startIndex)]);
  if (memory.exported !== false) exports.push([...name("memory"), 0x02, 0x00]);
  const body = [...(spec.locals ? vec([[...u32(spec.locals), VALTYPE.i32]]) : [0x00]), ...(spec.start ?? []), 0x0b];
  const data = (spec.data ?? []).map((d) => [0x00, ...op.i32(d.offset), 0x0b, ...u32(bytesOf(d.bytes).length), ...bytesOf(d.bytes)]);
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec(types)),
    ...(importEntries.length ? section(2, vec(importEntries)) : []),
    ...section(3, vec([u32(startType)])),
    ...(table && !table.imported ? section(4, vec([tableType])) : []),
    ...(memory.imported ? [] : section(5, vec([limits]))),
    ...section(7, vec(exports)),
    ...section(10, vec([[...u32(body.length), ...body]])),
    ...(data.length ? section(11, vec(data)) : []),
  ]);
}

// WASI imports used by the test apps, with their index in `imports`.
export const FD_WRITE: FuncImport = { name: "fd_write", params: ["i32", "i32", "i32", "i32"], results: ["i32"] };
export const FD_READ: FuncImport = { name: "fd_read", params: ["i32", "i32", "i32", "i32"], results: ["i32"] };
export const PROC_EXIT: FuncImport = { name: "proc_exit", params: ["i32"], results: [] };
export const POLL_ONEOFF: FuncImport = { name: "poll_oneoff", params: ["i32", "i32", "i32", "i32"], results: ["i32"] };
export const ARGS_SIZES_GET: FuncImport = { name: "args_sizes_get", params: ["i32", "i32"], results: ["i32"] };
export const ARGS_GET: FuncImport = { name: "args_get", params: ["i32", "i32"], results: ["i32"] };
export const ENVIRON_SIZES_GET: FuncImport = { name: "environ_sizes_get", params: ["i32", "i32"], results: ["i32"] };
export const FD_CLOSE: FuncImport = { name: "fd_close", params: ["i32"], results: ["i32"] };
export const FD_RENUMBER: FuncImport = { name: "fd_renumber", params: ["i32", "i32"], results: ["i32"] };
export const PATH_OPEN: FuncImport = {
  name: "path_open",
  params: ["i32", "i32", "i32", "i32", "i32", "i64", "i64", "i32", "i32"],
  results: ["i32"],
};

/** Instructions that write `length` bytes at `offset` to `fd` through fd_write (import index `fdWrite`); uses memory 16..24. */
export function write(fdWrite: number, fd: number, offset: number, length: number): number[] {
  return [
    ...op.i32(16), ...op.i32(offset), ...op.i32Store,
    ...op.i32(20), ...op.i32(length), ...op.i32Store,
    ...op.i32(fd), ...op.i32(16), ...op.i32(1), ...op.i32(24), ...op.call(fdWrite), ...op.drop,
  ];
}
