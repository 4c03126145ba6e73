/**
 * The one reader of WebAssembly binaries, for the farm that checks a published module and the worker that runs
 * it (through convex/contract.ts): the header, sections in order, LEB128 numbers, names, imports, tables,
 * memories and exports, and the rewrite of the table and memory limits the worker does before compiling. Pure
 * TypeScript (the Convex runtime is not promised to offer WebAssembly). What makes a module an app is appsWasm.ts.
 */

export const WASM_PAGE_BYTES = 65_536;

/** Why these bytes are not a module the farm can run. */
export class WasmModuleError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WasmModuleError";
  }
}

/** Hands the module's next chunk, or null at its end. */
export type ChunkSupply = () => Promise<Uint8Array | null>;

export type ExternKind = "func" | "table" | "memory" | "global" | "tag";
export type Limits = { initial: number; maximum?: number; shared: boolean };
export type TableType = { element: number; limits: Limits };

/** What an app is judged by: every import and export, the defined tables and memories, and where they lie. */
export type ModuleShape = {
  imports: Array<{ module: string; field: string; kind: ExternKind }>;
  functions: number;
  bodies: number;
  tables: TableType[];
  memories: Limits[];
  exports: Array<{ name: string; kind: ExternKind }>;
  /** The table and memory sections: from their id byte to their end, for `rewriteLimits`. */
  spans: Array<{ id: number; start: number; end: number }>;
};

const KINDS: ExternKind[] = ["func", "table", "memory", "global", "tag"];
// Non-custom sections in the order the spec requires (tag, 13, sits between memory and global).
const SECTION_ORDER = [1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11];
const SECTION_IMPORT = 2;
const SECTION_FUNCTION = 3;
const SECTION_TABLE = 4;
const SECTION_MEMORY = 5;
const SECTION_EXPORT = 7;
const SECTION_CODE = 10;
/** Sections read whole (and then checked); every other one is walked past by its size. */
const HELD_SECTIONS = new Set([SECTION_IMPORT, SECTION_FUNCTION, SECTION_TABLE, SECTION_MEMORY, SECTION_EXPORT]);
const HAS_MAX = 0x01;
const SHARED = 0x02;
const IS_64 = 0x04;
const FUNCREF = 0x70;
const EXTERNREF = 0x6f;

/**
 * The module's shape, read once front to back as its chunks arrive: only the small sections an app is judged by
 * are held whole; code, data and custom sections are walked past, so a 20 MiB module is never gathered here.
 * Throws WasmModuleError for bytes that are not a well-formed module; errors of the supply propagate.
 */
export async function readModule(supply: ChunkSupply): Promise<ModuleShape> {
  const r = new ChunkReader(supply);
  const magic = await r.take(4, "the magic number");
  if (magic[0] !== 0 || magic[1] !== 0x61 || magic[2] !== 0x73 || magic[3] !== 0x6d) {
    throw new WasmModuleError("not a WebAssembly module: the body does not start with \\0asm");
  }
  const version = await r.take(4, "the version");
  if (version[0] !== 1 || version[1] !== 0 || version[2] !== 0 || version[3] !== 0) {
    throw new WasmModuleError("not a WebAssembly module this farm runs: the binary version is not 1 (a component, or a future format)");
  }
  const shape: ModuleShape = { imports: [], functions: 0, bodies: 0, tables: [], memories: [], exports: [], spans: [] };
  let lastOrder = -1;
  while (!(await r.atEnd())) {
    const start = r.position;
    const id = await r.byte("a section id");
    const size = await r.u32("a section size");
    const end = r.position + size;
    if (id === 0) {
      // a custom section: its name must fit in it; the rest is skipped
      await r.skip(await r.u32("a custom section's name", end), "a custom section's name", end);
      await r.skip(end - r.position, "a custom section", end);
      continue;
    }
    const order = SECTION_ORDER.indexOf(id);
    if (order < 0) throw new WasmModuleError(`unknown section id ${id}`);
    if (order <= lastOrder) throw new WasmModuleError(`section ${id} is out of order or repeated`);
    lastOrder = order;
    if (id === SECTION_CODE) {
      shape.bodies = await r.u32("an entry count", end);
      for (let i = 0; i < shape.bodies; i++) await r.skip(await r.u32("a function body size", end), "a function body", end);
      if (r.position !== end) throw new WasmModuleError("the code section has trailing bytes");
    } else if (HELD_SECTIONS.has(id)) {
      const content = await r.take(size, `section ${id}`);
      readSection(id, new Reader(content), shape);
      if (id === SECTION_TABLE || id === SECTION_MEMORY) shape.spans.push({ id, start, end });
    } else {
      await r.skip(size, `section ${id}`);
    }
  }
  if (shape.functions !== shape.bodies) throw new WasmModuleError(`the module declares ${shape.functions} functions but has ${shape.bodies} bodies`);
  return shape;
}

function readSection(id: number, s: Reader, shape: ModuleShape): void {
  const count = s.u32("an entry count");
  const exported = new Set<string>();
  for (let i = 0; i < count; i++) {
    if (id === SECTION_IMPORT) shape.imports.push(readImport(s));
    else if (id === SECTION_FUNCTION) s.u32("a type index");
    else if (id === SECTION_TABLE) shape.tables.push(readTableType(s));
    else if (id === SECTION_MEMORY) shape.memories.push(readLimits(s, "memory"));
    else {
      const name = s.text("an export's name");
      const kind = readKind(s, "an export kind");
      s.u32("an export's index");
      if (exported.has(name)) throw new WasmModuleError(`the module exports "${name}" twice`);
      exported.add(name);
      shape.exports.push({ name, kind });
    }
  }
  if (id === SECTION_FUNCTION) shape.functions = count;
  if (!s.done) throw new WasmModuleError(`section ${id} has trailing bytes`);
}

function readImport(s: Reader): ModuleShape["imports"][number] {
  const module = s.text("an import's module name");
  const field = s.text("an import's field name");
  const kind = readKind(s, "an import kind");
  if (kind === "func") s.u32("a type index");
  else if (kind === "table") readTableType(s);
  else if (kind === "memory") readLimits(s, "memory");
  else if (kind === "global") s.take(2, "a global type");
  else {
    s.byte("a tag attribute");
    s.u32("a tag type index");
  }
  return { module, field, kind };
}

function readKind(s: Reader, what: string): ExternKind {
  const kind = s.byte(what);
  if (kind >= KINDS.length) throw new WasmModuleError(`unknown ${what.replace(/^an? /, "")} ${kind}`);
  return KINDS[kind];
}

function readTableType(s: Reader): TableType {
  const element = s.byte("a table element type");
  // 0x40: a table with an initializer expression (function references); not something an app needs.
  if (element === 0x40) throw new WasmModuleError("tables with initializer expressions are not supported");
  if (element !== FUNCREF && element !== EXTERNREF) throw new WasmModuleError(`unsupported table element type 0x${element.toString(16)}`);
  return { element, limits: readLimits(s, "table") };
}

function readLimits(s: Reader, of: "memory" | "table"): Limits {
  const flags = s.byte(`${of} limits`);
  if (flags & IS_64) throw new WasmModuleError(`64-bit ${of === "memory" ? "memories" : "tables"} are not supported`);
  if (flags & ~(of === "memory" ? HAS_MAX | SHARED : HAS_MAX)) throw new WasmModuleError(`unknown ${of} limits flags 0x${flags.toString(16)}`);
  const initial = s.u32(`a ${of}'s initial size`);
  if (!(flags & HAS_MAX)) return { initial, shared: (flags & SHARED) !== 0 };
  const maximum = s.u32(`a ${of}'s maximum size`);
  if (maximum < initial) throw new WasmModuleError(`a ${of}'s maximum size ${maximum} is below its initial size ${initial}`);
  return { initial, maximum, shared: (flags & SHARED) !== 0 };
}

/**
 * The module with every defined memory's maximum set to at most `maxPages` and every defined table's to at most
 * `maxElements` (a smaller declared maximum stays); every other byte is copied as it was. `shape` is what
 * readModule read of these bytes.
 */
export function rewriteLimits(bytes: Uint8Array, shape: ModuleShape, maxPages: number, maxElements: number): Uint8Array {
  const capped = (limits: Limits, cap: number) => [
    (limits.shared ? SHARED : 0) | HAS_MAX,
    ...leb(limits.initial),
    ...leb(Math.min(limits.maximum ?? cap, cap)),
  ];
  const pieces: Uint8Array[] = [];
  let copied = 0;
  for (const span of shape.spans) {
    const entries =
      span.id === SECTION_MEMORY ? shape.memories.map((m) => capped(m, maxPages)) : shape.tables.map((t) => [t.element, ...capped(t.limits, maxElements)]);
    const content = [...leb(entries.length), ...entries.flat()];
    pieces.push(bytes.subarray(copied, span.start), Uint8Array.from([span.id, ...leb(content.length), ...content]));
    copied = span.end;
  }
  pieces.push(bytes.subarray(copied));
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  pieces.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
}

function leb(value: number): number[] {
  const out: number[] = [];
  do {
    const low = value & 0x7f;
    value = Math.floor(value / 128);
    out.push(value ? low | 0x80 : low);
  } while (value);
  return out;
}

/** An unsigned 32-bit LEB128 number, a byte at a time: at most 5 bytes, the last holding at most 4 bits. */
function readU32(next: () => number, what: string): number {
  let result = 0;
  for (let i = 0; i < 5; i++) {
    const b = next();
    if (i === 4 && b > 0x0f) break;
    result += (b & 0x7f) * 2 ** (7 * i);
    if (!(b & 0x80)) return result;
  }
  throw new WasmModuleError(`${what} is not a valid 32-bit LEB128 number`);
}

function truncated(what: string): WasmModuleError {
  return new WasmModuleError(`the module is cut short: ${what} runs past the end`);
}

/** A held section's bytes. */
class Reader {
  private pos = 0;
  constructor(private readonly data: Uint8Array) {}

  get done(): boolean {
    return this.pos >= this.data.length;
  }

  byte(what: string): number {
    if (this.pos >= this.data.length) throw truncated(what);
    return this.data[this.pos++];
  }

  take(n: number, what: string): Uint8Array {
    if (n > this.data.length - this.pos) throw truncated(what);
    this.pos += n;
    return this.data.subarray(this.pos - n, this.pos);
  }

  u32(what: string): number {
    return readU32(() => this.byte(what), what);
  }

  text(what: string): string {
    const bytes = this.take(this.u32(what), what);
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw new WasmModuleError(`${what} is not valid UTF-8`);
    }
  }
}

/**
 * The module as a sequence of chunks, read forward only. Bytes already passed are dropped; `take` copies only
 * the few bytes it returns when they straddle chunks. `limit` (a section's end) bounds a read like the end
 * of the module does.
 */
class ChunkReader {
  private chunk: Uint8Array = new Uint8Array(0);
  private at = 0;
  private ended = false;
  /** Bytes of the module passed so far. */
  position = 0;

  constructor(private readonly supply: ChunkSupply) {}

  /** Is the whole module read? Asks for the next chunk when the current one is used up. */
  async atEnd(): Promise<boolean> {
    while (this.at >= this.chunk.length && !this.ended) {
      const next = await this.supply();
      if (next === null) this.ended = true;
      else {
        this.chunk = next;
        this.at = 0;
      }
    }
    return this.at >= this.chunk.length;
  }

  async byte(what: string, limit = Infinity): Promise<number> {
    if (this.position >= limit || (await this.atEnd())) throw truncated(what);
    this.position++;
    return this.chunk[this.at++];
  }

  /** `n` bytes; pieces are gathered as they arrive, so a huge declared size allocates no more than the module has. */
  async take(n: number, what: string): Promise<Uint8Array> {
    if (this.chunk.length - this.at >= n) {
      this.at += n;
      this.position += n;
      return this.chunk.subarray(this.at - n, this.at);
    }
    const pieces: Uint8Array[] = [];
    for (let left = n; left > 0; ) {
      if (await this.atEnd()) throw truncated(what);
      const piece = this.chunk.subarray(this.at, this.at + left);
      pieces.push(piece);
      left -= piece.length;
      this.at += piece.length;
      this.position += piece.length;
    }
    const out = new Uint8Array(n);
    pieces.reduce((at, p) => (out.set(p, at), at + p.length), 0);
    return out;
  }

  async skip(n: number, what: string, limit = Infinity): Promise<void> {
    if (this.position + n > limit) throw truncated(what);
    for (let left = n; left > 0; ) {
      if (await this.atEnd()) throw truncated(what);
      const step = Math.min(left, this.chunk.length - this.at);
      this.at += step;
      this.position += step;
      left -= step;
    }
  }

  /** Gathers the number's bytes (at most 5), then reads them as Reader does. */
  async u32(what: string, limit = Infinity): Promise<number> {
    const bytes: number[] = [];
    do bytes.push(await this.byte(what, limit));
    while (bytes.length < 5 && bytes[bytes.length - 1] & 0x80);
    let i = 0;
    return readU32(() => bytes[i++], what);
  }
}
