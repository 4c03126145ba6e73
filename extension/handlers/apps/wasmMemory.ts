/**
 * Caps the linear memory a WebAssembly module can reach by rewriting the maximum of every memory it declares
 * or imports. A module that declares no maximum may otherwise grow until the machine runs out; with the cap
 * written into the module, `memory.grow` past it fails inside the module (the module sees -1, malloc sees
 * NULL), exactly as the WebAssembly spec has it, and the donor's machine never notices.
 */

export const WASM_PAGE_BYTES = 65_536;

/** A module that cannot be rewritten: malformed, memory64, or needing more memory at start than the cap. */
export class WasmModuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WasmModuleError";
  }
}

export type MemoryInfo = {
  imported: boolean;
  /** Pages at start. */
  initial: number;
  /** The module's own maximum, if it declared one. */
  declaredMaximum?: number;
  /** The maximum after capping. */
  maximum: number;
};

/**
 * Elements any table may hold. A table declared without a maximum could otherwise be grown (`table.grow`) to
 * V8's limit of ten million entries, 80 MB of the donor's memory that no memory cap counts; real programs' tables
 * hold one entry per function called indirectly, some thousands at most.
 */
export const TABLE_ELEMENTS_MAX = 100_000;

const SECTION_IMPORT = 2;
const SECTION_TABLE = 4;
const SECTION_MEMORY = 5;
const IMPORT_FUNC = 0;
const IMPORT_TABLE = 1;
const IMPORT_MEMORY = 2;
const IMPORT_GLOBAL = 3;
const IMPORT_TAG = 4;
const LIMITS_HAS_MAX = 0x01;
const LIMITS_SHARED = 0x02;
const LIMITS_64 = 0x04;

/** Pages that fit in `megabytes` MiB. */
export function pagesForMegabytes(megabytes: number): number {
  return Math.floor((megabytes * 1024 * 1024) / WASM_PAGE_BYTES);
}

/**
 * Returns the module with every memory's maximum set to at most `maxPages` and every table's to at most
 * TABLE_ELEMENTS_MAX (a declared smaller maximum stays), and what it found. Everything but the import, table
 * and memory sections is copied byte for byte.
 */
export function capMemory(module: Uint8Array, maxPages: number): { bytes: Uint8Array; memories: MemoryInfo[] } {
  if (!Number.isInteger(maxPages) || maxPages < 0 || maxPages > 65_536) throw new RangeError(`maxPages must be 0..65536, got ${maxPages}`);
  const reader = new Reader(module, 0, module.length);
  checkHeader(reader);
  const out = new Writer();
  out.bytes(module.subarray(0, 8));
  const memories: MemoryInfo[] = [];
  while (!reader.done) {
    const id = reader.byte("a section id");
    const size = reader.u32("a section size");
    const content = reader.sub(size, `section ${id}`);
    if (id === SECTION_IMPORT || id === SECTION_MEMORY || id === SECTION_TABLE) {
      const rewritten = new Writer();
      if (id === SECTION_IMPORT) rewriteImports(content, rewritten, maxPages, memories);
      else if (id === SECTION_TABLE) rewriteTables(content, rewritten);
      else rewriteMemories(content, rewritten, maxPages, memories);
      out.byte(id);
      out.u32(rewritten.length);
      out.bytes(rewritten.result());
    } else {
      out.byte(id);
      out.u32(size);
      out.bytes(module.subarray(content.start, content.end));
    }
  }
  return { bytes: out.result(), memories };
}

function checkHeader(reader: Reader): void {
  const magic = reader.take(4, "the magic number");
  if (magic[0] !== 0 || magic[1] !== 0x61 || magic[2] !== 0x73 || magic[3] !== 0x6d) {
    throw new WasmModuleError("not a WebAssembly module (the file does not start with \\0asm)");
  }
  const version = reader.take(4, "the version");
  if (version[0] !== 1 || version[1] !== 0 || version[2] !== 0 || version[3] !== 0) {
    throw new WasmModuleError(`unsupported WebAssembly binary version ${Array.from(version).join(".")} (expected 1)`);
  }
}

function rewriteImports(section: Reader, out: Writer, maxPages: number, memories: MemoryInfo[]): void {
  const count = section.u32("the import count");
  out.u32(count);
  for (let i = 0; i < count; i++) {
    const start = section.pos;
    section.name("an import's module name");
    section.name("an import's field name");
    const kind = section.byte("an import kind");
    if (kind === IMPORT_MEMORY) {
      out.bytes(section.bytesFrom(start));
      memories.push(rewriteLimits(section, out, maxPages, true));
      continue;
    }
    if (kind === IMPORT_FUNC) section.u32("a type index");
    else if (kind === IMPORT_TABLE) {
      section.byte("a table element type");
      out.bytes(section.bytesFrom(start));
      rewriteTableLimits(section, out);
      continue;
    } else if (kind === IMPORT_GLOBAL) {
      section.byte("a global type");
      section.byte("a global mutability");
    } else if (kind === IMPORT_TAG) {
      section.byte("a tag attribute");
      section.u32("a tag type index");
    } else throw new WasmModuleError(`unknown import kind ${kind} at byte ${start}`);
    out.bytes(section.bytesFrom(start));
  }
  if (!section.done) throw new WasmModuleError("the import section has trailing bytes");
}

function rewriteMemories(section: Reader, out: Writer, maxPages: number, memories: MemoryInfo[]): void {
  const count = section.u32("the memory count");
  out.u32(count);
  for (let i = 0; i < count; i++) memories.push(rewriteLimits(section, out, maxPages, false));
  if (!section.done) throw new WasmModuleError("the memory section has trailing bytes");
}

function rewriteLimits(section: Reader, out: Writer, maxPages: number, imported: boolean): MemoryInfo {
  const flags = section.byte("memory limits");
  if (flags & LIMITS_64) throw new WasmModuleError("64-bit memories are not supported");
  if (flags & ~(LIMITS_HAS_MAX | LIMITS_SHARED)) throw new WasmModuleError(`unknown memory limits flags 0x${flags.toString(16)}`);
  const initial = section.u32("a memory's initial size");
  const declaredMaximum = flags & LIMITS_HAS_MAX ? section.u32("a memory's maximum size") : undefined;
  if (initial > maxPages) {
    throw new WasmModuleError(
      `the module needs ${megabytes(initial)} MB of memory at start, more than its memory limit of ${megabytes(maxPages)} MB`,
    );
  }
  const maximum = Math.min(declaredMaximum ?? maxPages, maxPages);
  out.byte((flags & LIMITS_SHARED) | LIMITS_HAS_MAX);
  out.u32(initial);
  out.u32(maximum);
  return { imported, initial, declaredMaximum, maximum };
}

function rewriteTables(section: Reader, out: Writer): void {
  const count = section.u32("the table count");
  out.u32(count);
  for (let i = 0; i < count; i++) {
    const type = section.byte("a table element type");
    // 0x40: a table with an initializer expression (function references); not something an app needs.
    if (type === 0x40) throw new WasmModuleError("tables with initializer expressions are not supported");
    out.byte(type);
    rewriteTableLimits(section, out);
  }
  if (!section.done) throw new WasmModuleError("the table section has trailing bytes");
}

function rewriteTableLimits(section: Reader, out: Writer): void {
  const flags = section.byte("table limits");
  if (flags & LIMITS_64) throw new WasmModuleError("64-bit tables are not supported");
  if (flags & ~LIMITS_HAS_MAX) throw new WasmModuleError(`unknown table limits flags 0x${flags.toString(16)}`);
  const initial = section.u32("a table's initial size");
  const declaredMaximum = flags & LIMITS_HAS_MAX ? section.u32("a table's maximum size") : undefined;
  if (initial > TABLE_ELEMENTS_MAX) throw new WasmModuleError(`the module declares a table of ${initial} elements; at most ${TABLE_ELEMENTS_MAX} are allowed`);
  out.byte(LIMITS_HAS_MAX);
  out.u32(initial);
  out.u32(Math.min(declaredMaximum ?? TABLE_ELEMENTS_MAX, TABLE_ELEMENTS_MAX));
}

function megabytes(pages: number): string {
  return String(Math.round(((pages * WASM_PAGE_BYTES) / 1024 / 1024) * 10) / 10);
}

class Reader {
  pos: number;
  constructor(
    private readonly data: Uint8Array,
    readonly start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  byte(what: string): number {
    if (this.pos >= this.end) throw truncated(what, this.pos);
    return this.data[this.pos++];
  }

  take(n: number, what: string): Uint8Array {
    if (n > this.end - this.pos) throw truncated(what, this.pos);
    const bytes = this.data.subarray(this.pos, this.pos + n);
    this.pos += n;
    return bytes;
  }

  sub(n: number, what: string): Reader {
    if (n > this.end - this.pos) throw truncated(what, this.pos);
    const reader = new Reader(this.data, this.pos, this.pos + n);
    this.pos += n;
    return reader;
  }

  bytesFrom(start: number): Uint8Array {
    return this.data.subarray(start, this.pos);
  }

  name(what: string): void {
    this.take(this.u32(what), what);
  }

  u32(what: string): number {
    let result = 0;
    for (let i = 0; i < 5; i++) {
      const b = this.byte(what);
      if (i === 4 && b > 0x0f) throw new WasmModuleError(`${what} at byte ${this.pos - 1} is not a valid 32-bit LEB128 number`);
      result += (b & 0x7f) * 2 ** (7 * i);
      if (!(b & 0x80)) return result;
    }
    throw new WasmModuleError(`${what} at byte ${this.pos} is not a valid 32-bit LEB128 number`);
  }
}

function truncated(what: string, at: number): WasmModuleError {
  return new WasmModuleError(`the module is truncated: ${what} runs past the end (byte ${at})`);
}

class Writer {
  private readonly chunks: Uint8Array[] = [];
  length = 0;

  byte(b: number): void {
    this.bytes(Uint8Array.of(b));
  }

  bytes(b: Uint8Array): void {
    this.chunks.push(b);
    this.length += b.length;
  }

  u32(value: number): void {
    const out: number[] = [];
    let v = value;
    do {
      let b = v & 0x7f;
      v = Math.floor(v / 128);
      if (v) b |= 0x80;
      out.push(b);
    } while (v);
    this.bytes(Uint8Array.from(out));
  }

  result(): Uint8Array {
    const all = new Uint8Array(this.length);
    let at = 0;
    for (const c of this.chunks) {
      all.set(c, at);
      at += c.length;
    }
    return all;
  }
}
