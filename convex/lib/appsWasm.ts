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

/** Hands the module's next chunk, or null at its end. */
export type ChunkSupply = () => Promise<Uint8Array | null>;

/**
 * Why these bytes cannot be an app, or the module's summary. The module is read once, front to back, as its
 * chunks arrive: only the small sections an app is judged by (imports, functions, memory, exports) are held
 * whole; code, data and custom sections are walked past, so a 20 MiB module is never gathered here. When the
 * answer is ok, every chunk has been asked for; errors other than the module's own (the supply's) propagate.
 */
export async function inspectAppModule(supply: ChunkSupply): Promise<{ ok: true; summary: WasmSummary } | { ok: false; problem: string }> {
  try {
    return { ok: true, summary: await inspect(new ChunkReader(supply)) };
  } catch (e) {
    if (e instanceof NotAnApp) return { ok: false, problem: e.message };
    throw e;
  }
}

class NotAnApp extends Error {}

/** Sections read whole (and then checked by a Reader); every other one is skipped by its size. */
const HELD_SECTIONS = new Set([SECTION_IMPORT, SECTION_FUNCTION, SECTION_MEMORY, SECTION_EXPORT]);

async function inspect(r: ChunkReader): Promise<WasmSummary> {
  const magic = await r.take(4, "the magic number");
  if (magic[0] !== 0 || magic[1] !== 0x61 || magic[2] !== 0x73 || magic[3] !== 0x6d) {
    throw new NotAnApp("not a WebAssembly module: the body does not start with \\0asm");
  }
  const version = await r.take(4, "the version");
  if (version[0] !== 1 || version[1] !== 0 || version[2] !== 0 || version[3] !== 0) {
    throw new NotAnApp("not a WebAssembly module this farm runs: the binary version is not 1 (a component, or a future format)");
  }
  let lastOrder = -1;
  let functions: number | undefined;
  let bodies: number | undefined;
  let memory: WasmSummary | undefined;
  let exports = new Set<string>();
  while (!(await r.atEnd())) {
    const id = await r.byte("a section id");
    const size = await r.u32("a section size");
    const end = r.position + size;
    if (id === 0) {
      // a custom section: its name must fit in it; the rest is skipped
      const nameBytes = await r.u32("a custom section's name", end);
      await r.skip(nameBytes, "a custom section's name", end);
      await r.skip(end - r.position, `section ${id}`, end);
      continue;
    }
    const order = SECTION_ORDER.indexOf(id);
    if (order < 0) throw new NotAnApp(`unknown section id ${id}`);
    if (order <= lastOrder) throw new NotAnApp(`section ${id} is out of order or repeated`);
    lastOrder = order;
    if (HELD_SECTIONS.has(id)) {
      const content = await r.take(size, `section ${id}`);
      const s = new Reader(content, 0, content.length);
      if (id === SECTION_IMPORT) checkImports(s);
      else if (id === SECTION_FUNCTION) functions = countEntries(s, (x) => x.u32("a type index"));
      else if (id === SECTION_MEMORY) memory = readMemories(s);
      else exports = readExports(s);
    } else if (id === SECTION_CODE) {
      bodies = await r.u32("an entry count", end);
      for (let i = 0; i < bodies; i++) await r.skip(await r.u32("a function body size", end), "a function body", end);
      if (r.position !== end) throw new NotAnApp("a section has trailing bytes");
    } else {
      await r.skip(size, `section ${id}`);
    }
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

  async take(n: number, what: string, limit = Infinity): Promise<Uint8Array> {
    if (this.position + n > limit) throw truncated(what);
    if (this.chunk.length - this.at >= n) {
      const out = this.chunk.subarray(this.at, this.at + n);
      this.at += n;
      this.position += n;
      return out;
    }
    const out = new Uint8Array(n);
    for (let filled = 0; filled < n; ) {
      if (await this.atEnd()) throw truncated(what);
      const piece = this.chunk.subarray(this.at, this.at + n - filled);
      out.set(piece, filled);
      filled += piece.length;
      this.at += piece.length;
      this.position += piece.length;
    }
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

  async u32(what: string, limit = Infinity): Promise<number> {
    let result = 0;
    for (let i = 0; i < 5; i++) {
      const b = await this.byte(what, limit);
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
