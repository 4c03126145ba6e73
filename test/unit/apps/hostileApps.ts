// Test apps, hand-assembled: each misbehaves in one way the sandbox must contain.
import {
  ARGS_GET,
  ARGS_SIZES_GET,
  buildModule,
  ENVIRON_SIZES_GET,
  FD_CLOSE,
  FD_READ,
  FD_RENUMBER,
  FD_WRITE,
  op,
  PATH_OPEN,
  POLL_ONEOFF,
  PROC_EXIT,
  write,
} from "./wasmBuilder";

const TEXT = 1024; // where data segments start

function text(s: string) {
  return { offset: TEXT, bytes: s, length: new TextEncoder().encode(s).length };
}

/** Prints `lines` to stdout and returns normally. */
export function prints(stdout: string, stderr = ""): Uint8Array {
  const out = text(stdout);
  const err = { offset: TEXT + out.length + 16, bytes: stderr, length: new TextEncoder().encode(stderr).length };
  return buildModule({
    imports: [FD_WRITE],
    data: [out, ...(stderr ? [err] : [])],
    start: [...write(0, 1, out.offset, out.length), ...(stderr ? write(0, 2, err.offset, err.length) : [])],
  });
}

/** Copies its stdin to stdout (so the result is exactly what it was given) after a progress line. */
export function echoStdin(): Uint8Array {
  const progress = text('{"progress": 0, "status": "started"}\n');
  const buffer = 8192;
  return buildModule({
    imports: [FD_WRITE, FD_READ],
    memory: { min: 2 },
    data: [progress],
    locals: 1,
    start: [
      ...write(0, 1, progress.offset, progress.length),
      // iovec at 32: (buffer, 60000); nread at 40
      ...op.i32(32), ...op.i32(buffer), ...op.i32Store,
      ...op.i32(36), ...op.i32(60_000), ...op.i32Store,
      ...op.i32(0), ...op.i32(32), ...op.i32(1), ...op.i32(40), ...op.call(1), ...op.drop,
      // newline after the copied bytes
      ...op.i32(buffer), ...op.i32(40), ...op.i32Load, ...op.i32Add, ...op.i32(10), ...op.i32Store8,
      ...op.i32(40), ...op.i32Load, ...op.localSet(0),
      ...op.i32(16), ...op.i32(buffer), ...op.i32Store,
      ...op.i32(20), ...op.localGet(0), ...op.i32(1), ...op.i32Add, ...op.i32Store,
      ...op.i32(1), ...op.i32(16), ...op.i32(1), ...op.i32(24), ...op.call(0), ...op.drop,
    ],
  });
}

/**
 * Tries to open `path` relative to `dirFd` (fd 3 is where a preopened directory would be), prints `{"errno": "NN"}` (two digits), and if
 * the open succeeded also copies the file's first bytes to stdout.
 */
export function opensHostFile(path: string, dirFd = 3): Uint8Array {
  const template = text('{"errno": "00"}\n'); // digits at +11, +12
  const pathData = { offset: 2048, bytes: path.replace(/^\/+/, "") };
  const pathLength = new TextEncoder().encode(pathData.bytes).length;
  const opened = 200;
  const buffer = 4096;
  return buildModule({
    imports: [FD_WRITE, PATH_OPEN, FD_READ],
    data: [template, pathData],
    locals: 1,
    start: [
      ...op.i32(dirFd), ...op.i32(1), ...op.i32(pathData.offset), ...op.i32(pathLength), ...op.i32(0),
      // rights: fd_read only (what a reader of the file would ask for)
      ...op.i64(2n), ...op.i64(0n), ...op.i32(0), ...op.i32(opened), ...op.call(1), ...op.localSet(0),
      ...op.i32(TEXT + 11), ...op.localGet(0), ...op.i32(10), ...op.i32DivU, ...op.i32(48), ...op.i32Add, ...op.i32Store8,
      ...op.i32(TEXT + 12), ...op.localGet(0), ...op.i32(10), ...op.i32RemU, ...op.i32(48), ...op.i32Add, ...op.i32Store8,
      ...op.localGet(0), ...op.i32Eqz, ...op.if,
      // Opened: read up to 1000 bytes of it and print them (the test fails if this ever happens).
      ...op.i32(32), ...op.i32(buffer), ...op.i32Store,
      ...op.i32(36), ...op.i32(1000), ...op.i32Store,
      ...op.i32(opened), ...op.i32Load, ...op.i32(32), ...op.i32(1), ...op.i32(40), ...op.call(2), ...op.drop,
      ...op.i32(16), ...op.i32(buffer), ...op.i32Store,
      ...op.i32(20), ...op.i32(40), ...op.i32Load, ...op.i32Store,
      ...op.i32(1), ...op.i32(16), ...op.i32(1), ...op.i32(24), ...op.call(0), ...op.drop,
      ...op.end,
      ...write(0, 1, template.offset, template.length),
    ],
  });
}

/** Counts to `iterations` (a fixed amount of CPU work), then prints `{"done": true}`. */
export function busyLoop(iterations: number): Uint8Array {
  const done = text('{"done": true}\n');
  return buildModule({
    imports: [FD_WRITE],
    data: [done],
    locals: 1,
    start: [
      ...op.loop,
      ...op.localGet(0), ...op.i32(1), ...op.i32Add, ...op.localTee(0), ...op.i32(iterations), ...op.i32Eq, ...op.i32Eqz, ...op.brIf(0),
      ...op.end,
      ...write(0, 1, done.offset, done.length),
    ],
  });
}

/** Loops forever. */
export function endlessLoop(): Uint8Array {
  return buildModule({ start: [...op.loop, ...op.br(0), ...op.end] });
}

/**
 * Grows its memory (declared without a maximum) one page at a time, writing to every new page so it is really
 * resident, until growing fails; then traps.
 */
export function memoryBomb(): Uint8Array {
  return buildModule({
    memory: { min: 1 },
    locals: 1,
    start: [
      ...op.loop,
      ...op.i32(1), ...op.memoryGrow, ...op.localTee(0), ...op.i32(-1), ...op.i32Eq,
      ...op.if, ...op.unreachable, ...op.end,
      // One write per 4 KiB, so every new page is resident.
      ...Array.from({ length: 16 }, (_, i) => [...op.localGet(0), ...op.i32(65536), ...op.i32Mul, ...op.i32(i * 4096), ...op.i32Add, ...op.i32(1), ...op.i32Store]).flat(),
      ...op.br(0),
      ...op.end,
    ],
  });
}

/** Writes two stderr lines, then executes `unreachable`. */
export function traps(): Uint8Array {
  const err = text("about to trap\nlast words\n");
  return buildModule({ imports: [FD_WRITE], data: [err], start: [...write(0, 2, err.offset, err.length), ...op.unreachable] });
}

/** Writes to stderr, then exits with `code`. */
export function exitsWith(code: number): Uint8Array {
  const err = text("failing on purpose\n");
  return buildModule({
    imports: [FD_WRITE, PROC_EXIT],
    data: [err],
    start: [...write(0, 2, err.offset, err.length), ...op.i32(code), ...op.call(1)],
  });
}

/** Prints a checkpoint line of `decodedBytes` bytes (all zero), then a result. */
export function checkpoints(decodedBytes: number): Uint8Array {
  const line = `{"checkpoint": "${Buffer.alloc(decodedBytes).toString("base64")}"}\n{"done": true}\n`;
  const data = text(line);
  const pages = Math.ceil((TEXT + data.length) / 65536) + 1;
  return buildModule({ imports: [FD_WRITE], memory: { min: pages }, data: [data], start: write(0, 1, data.offset, data.length) });
}

/** Sleeps in poll_oneoff on one relative monotonic-clock subscription of `seconds`, then prints `{"woke": true}`. */
export function sleeper(seconds: number): Uint8Array {
  const woke = text('{"woke": true}\n');
  const sub = 256; // 48-byte subscription: userdata u64, tag u8 (0: clock) at +8, clock id u32 at +16, timeout u64 (ns) at +24
  return buildModule({
    imports: [FD_WRITE, POLL_ONEOFF],
    data: [woke],
    start: [
      ...op.i32(sub + 16), ...op.i32(1), ...op.i32Store,
      ...op.i32(sub + 24), ...op.i64(BigInt(seconds) * 1_000_000_000n), ...op.i64Store,
      ...op.i32(sub), ...op.i32(512), ...op.i32(1), ...op.i32(600), ...op.call(1), ...op.drop,
      ...write(0, 1, woke.offset, woke.length),
    ],
  });
}

/**
 * Grows a table declared without a maximum 1 000 entries at a time until growing fails; then prints
 * `{"capped": true}` when the table holds at most `cap` entries, and traps when it got more.
 */
export function tableBomb(cap: number): Uint8Array {
  const capped = text('{"capped": true}\n');
  return buildModule({
    imports: [FD_WRITE],
    table: { min: 1 },
    data: [capped],
    start: [
      ...op.loop,
      ...op.tableGrowNull(op.i32(1000)), ...op.i32(-1), ...op.i32Eq,
      ...op.if,
      ...op.tableSize, ...op.i32(cap), ...op.i32LeU,
      ...op.if, ...write(0, 1, capped.offset, capped.length), ...op.return, ...op.end,
      ...op.unreachable,
      ...op.end,
      ...op.br(0),
      ...op.end,
    ],
  });
}

/** `_start` calls itself for ever: a stack overflow. */
export function deepRecursion(): Uint8Array {
  return buildModule({ start: [...op.call(0)] });
}

/** Prints 1 KiB lines (64 KiB per call) to stdout for ever. */
export function outputFlood(): Uint8Array {
  const chunk = { offset: 65536, bytes: ("x".repeat(1023) + "\n").repeat(64) };
  return buildModule({
    imports: [FD_WRITE],
    memory: { min: 2 },
    data: [chunk],
    start: [...op.loop, ...write(0, 1, chunk.offset, 65536), ...op.br(0), ...op.end],
  });
}

/** Two decimal digits of the i32 at `address`, stored at `at` and `at + 1`. */
function digitsOf(address: number, at: number): number[] {
  return [
    ...op.i32(at), ...op.i32(address), ...op.i32Load, ...op.i32(10), ...op.i32DivU, ...op.i32(48), ...op.i32Add, ...op.i32Store8,
    ...op.i32(at + 1), ...op.i32(address), ...op.i32Load, ...op.i32(10), ...op.i32RemU, ...op.i32(48), ...op.i32Add, ...op.i32Store8,
  ];
}

/**
 * Reads its arguments and environment, and prints `{"argc": "NN", "argBytes": "NN", "envc": "NN", "envBytes": "NN",
 * "arg0": "<its first argument, up to 32 bytes>"}`.
 */
export function readsArgsAndEnviron(): Uint8Array {
  const template = text('{"argc": "00", "argBytes": "00", "envc": "00", "envBytes": "00", "arg0": "                                "}\n');
  const at = (field: string) => TEXT + template.bytes.indexOf(`"${field}": "`) + field.length + 5;
  const argv = 3000; // argv pointers
  const argBuffer = 3100;
  return buildModule({
    imports: [FD_WRITE, ARGS_SIZES_GET, ARGS_GET, ENVIRON_SIZES_GET],
    data: [template],
    start: [
      ...op.i32(256), ...op.i32(260), ...op.call(1), ...op.drop,
      ...op.i32(264), ...op.i32(268), ...op.call(3), ...op.drop,
      ...digitsOf(256, at("argc")), ...digitsOf(260, at("argBytes")), ...digitsOf(264, at("envc")), ...digitsOf(268, at("envBytes")),
      ...op.i32(argv), ...op.i32(argBuffer), ...op.call(2), ...op.drop,
      // copy up to 32 bytes of argv[0] (stopping at its NUL) into the template
      ...op.i32(0), ...op.localSet(0),
      ...op.block, ...op.loop,
      ...op.localGet(0), ...op.i32(32), ...op.i32Eq, ...op.brIf(1),
      ...op.i32(argBuffer), ...op.localGet(0), ...op.i32Add, ...op.i32Load8U, ...op.i32Eqz, ...op.brIf(1),
      ...op.i32(at("arg0")), ...op.localGet(0), ...op.i32Add,
      ...op.i32(argBuffer), ...op.localGet(0), ...op.i32Add, ...op.i32Load8U, ...op.i32Store8,
      ...op.localGet(0), ...op.i32(1), ...op.i32Add, ...op.localSet(0),
      ...op.br(0),
      ...op.end, ...op.end,
      ...write(0, 1, template.offset, template.length),
    ],
    locals: 1,
  });
}

/**
 * Renumbers stdout onto stdin and closes stdout, then writes its result to stdout anyway:
 * `{"renumber": "NN", "close": "NN"}` with the errnos it got.
 */
export function closesStdio(): Uint8Array {
  const template = text('{"renumber": "00", "close": "00"}\n');
  const at = (field: string) => TEXT + template.bytes.indexOf(`"${field}": "`) + field.length + 5;
  return buildModule({
    imports: [FD_WRITE, FD_RENUMBER, FD_CLOSE],
    data: [template],
    start: [
      ...op.i32(256), ...op.i32(1), ...op.i32(0), ...op.call(1), ...op.i32Store,
      ...op.i32(260), ...op.i32(1), ...op.call(2), ...op.i32Store,
      ...op.i32(2), ...op.call(2), ...op.drop,
      ...digitsOf(256, at("renumber")), ...digitsOf(260, at("close")),
      ...write(0, 1, template.offset, template.length),
    ],
  });
}

/** Imports a WASI-named function Node's WASI does not have. */
export function importsUnknownWasi(): Uint8Array {
  return buildModule({ imports: [{ name: "farmhand_read_secrets", params: [], results: [] }] });
}
