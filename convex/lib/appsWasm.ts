/**
 * What the server checks of a published module without compiling it (the Convex runtime is not promised to
 * offer WebAssembly): the binary's header and section structure, and that it is a WASI command an app can be —
 * it imports only `wasi_snapshot_preview1` functions, defines its memory and exports `_start` and `memory`.
 * Code is not validated here: a module whose code is invalid fails to compile on the worker, without retry.
 */

const WASI_MODULE = "wasi_snapshot_preview1";
const PAGE_BYTES = 65_536;

// Non-custom sections in the order the spec requires (tag, 13, sits between memory and global).
const SECTION_ORDER = [1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11];
const SECTION_IMPORT = 2;
const SECTION_FUNCTION = 3;
const SECTION_MEMORY = 5;
const SECTION_EXPORT = 7;
const SECTION_CODE = 10;

export type WasmSummary = {
  /** Pages the module's memory starts with. */
  initialPages: number;
  /** The module's own maximum, if it declares one. */
  maximumPages?: number;
};

/** Why these bytes cannot be an app, or the module's summary. */
export function inspectAppModule(bytes: Uint8Array): { ok: true; summary: WasmSummary } | { ok: false; problem: string } {
  try {
    return { ok: true, summary: inspect(bytes) };
  } catch (e) {
    if (e instanceof NotAnApp) return { ok: false, problem: e.message };
    throw e;
  }
}

class NotAnApp extends Error {}

function inspect(bytes: Uint8Array): WasmSummary {
  const r = new Reader(bytes, 0, bytes.length);
  const magic = r.take(4, "the magic number");
  if (magic[0] !== 0 || magic[1] !== 0x61 || magic[2] !== 0x73 || magic[3] !== 0x6d) {
    throw new NotAnApp("not a WebAssembly module: the body does not start with \\0asm");
  }
  const version = r.take(4, "the version");
  if (version[0] !== 1 || version[1] !== 0 || version[2] !== 0 || version[3] !== 0) {
    throw new NotAnApp("not a WebAssembly module this farm runs: the binary version is not 1 (a component, or a future format)");
  }
  let lastOrder = -1;
  let functions: number | undefined;
  let bodies: number | undefined;
  let memory: WasmSummary | undefined;
  let exports = new Set<string>();
  while (!r.done) {
    const id = r.byte("a section id");
    const size = r.u32("a section size");
    const content = r.sub(size, `section ${id}`);
    if (id === 0) {
      content.name("a custom section's name");
      continue;
    }
    const order = SECTION_ORDER.indexOf(id);
    if (order < 0) throw new NotAnApp(`unknown section id ${id}`);
    if (order <= lastOrder) throw new NotAnApp(`section ${id} is out of order or repeated`);
    lastOrder = order;
    if (id === SECTION_IMPORT) checkImports(content);
    else if (id === SECTION_FUNCTION) functions = countEntries(content, (s) => s.u32("a type index"));
    else if (id === SECTION_MEMORY) memory = readMemories(content);
    else if (id === SECTION_EXPORT) exports = readExports(content);
    else if (id === SECTION_CODE) bodies = countEntries(content, (s) => s.sub(s.u32("a function body size"), "a function body"));
  }
  if ((functions ?? 0) !== (bodies ?? 0)) throw new NotAnApp(`the module declares ${functions ?? 0} functions but has ${bodies ?? 0} bodies`);
  if (!memory) throw new NotAnApp("the module defines no memory (an app exports its own memory as \"memory\")");
  if (!exports.has("func:_start")) throw new NotAnApp("the module exports no _start function: build it as a WASI command (a program with main)");
  if (!exports.has("memory:memory")) throw new NotAnApp("the module exports no memory named \"memory\"");
  return memory;
}

function checkImports(s: Reader): void {
  const count = s.u32("the import count");
  for (let i = 0; i < count; i++) {
    const module = s.text("an import's module name");
    const field = s.text("an import's field name");
    const kind = s.byte("an import kind");
    if (module !== WASI_MODULE || kind !== 0) {
      throw new NotAnApp(`the module imports "${module}.${field}"; an app may import only ${WASI_MODULE} functions`);
    }
    s.u32("a type index");
  }
  s.end("the import section");
}

function readMemories(s: Reader): WasmSummary {
  const count = s.u32("the memory count");
  if (count !== 1) throw new NotAnApp(`the module defines ${count} memories; an app has exactly one`);
  const flags = s.byte("memory limits");
  if (flags & 0x04) throw new NotAnApp("64-bit memories are not supported");
  if (flags & ~0x03) throw new NotAnApp(`unknown memory limits flags 0x${flags.toString(16)}`);
  const initialPages = s.u32("the memory's initial size");
  const maximumPages = flags & 0x01 ? s.u32("the memory's maximum size") : undefined;
  s.end("the memory section");
  return maximumPages === undefined ? { initialPages } : { initialPages, maximumPages };
}

function readExports(s: Reader): Set<string> {
  const kinds = ["func", "table", "memory", "global", "tag"];
  const names = new Set<string>();
  const count = s.u32("the export count");
  for (let i = 0; i < count; i++) {
    const name = s.text("an export's name");
    const kind = s.byte("an export kind");
    s.u32("an export's index");
    names.add(`${kinds[kind] ?? kind}:${name}`);
  }
  s.end("the export section");
  return names;
}

function countEntries(s: Reader, skip: (s: Reader) => unknown): number {
  const count = s.u32("an entry count");
  for (let i = 0; i < count; i++) skip(s);
  s.end("a section");
  return count;
}

/** Megabytes of memory the module needs at start. */
export function initialMegabytes(summary: WasmSummary): number {
  return (summary.initialPages * PAGE_BYTES) / (1024 * 1024);
}

class Reader {
  private pos: number;
  constructor(
    private readonly data: Uint8Array,
    start: number,
    private readonly limit: number,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.limit;
  }

  end(what: string): void {
    if (!this.done) throw new NotAnApp(`${what} has trailing bytes`);
  }

  byte(what: string): number {
    if (this.pos >= this.limit) throw truncated(what);
    return this.data[this.pos++];
  }

  take(n: number, what: string): Uint8Array {
    if (n > this.limit - this.pos) throw truncated(what);
    const out = this.data.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  sub(n: number, what: string): Reader {
    if (n > this.limit - this.pos) throw truncated(what);
    const reader = new Reader(this.data, this.pos, this.pos + n);
    this.pos += n;
    return reader;
  }

  name(what: string): void {
    this.take(this.u32(what), what);
  }

  text(what: string): string {
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(this.take(this.u32(what), what));
    } catch (e) {
      if (e instanceof NotAnApp) throw e;
      throw new NotAnApp(`${what} is not valid UTF-8`);
    }
  }

  u32(what: string): number {
    let result = 0;
    for (let i = 0; i < 5; i++) {
      const b = this.byte(what);
      if (i === 4 && b > 0x0f) break;
      result += (b & 0x7f) * 2 ** (7 * i);
      if (!(b & 0x80)) return result;
    }
    throw new NotAnApp(`${what} is not a valid 32-bit LEB128 number`);
  }
}

function truncated(what: string): NotAnApp {
  return new NotAnApp(`the module is cut short: ${what} runs past the end`);
}
