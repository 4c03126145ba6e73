// A worker thread that runs one app instance under Node's WASI (preview 1), then is terminated by its host.
// No preopened directories, no environment, no arguments but the app's name. stdin/stdout/stderr are served
// here, in memory: WASI gets the null device for fds 0–2 so nothing the app does reaches the process's own.
import { closeSync, openSync } from "node:fs";
import { devNull } from "node:os";
import { WASI } from "node:wasi";
import { parentPort } from "node:worker_threads";
import { messageOf } from "../../worker/errors";
import type { ThreadMessage, ThreadRun } from "./threadProtocol";

const ERRNO_SUCCESS = 0;
const ERRNO_BADF = 8;
const ERRNO_FAULT = 21;

function post(message: ThreadMessage, transfer: ArrayBuffer[] = []): void {
  parentPort?.postMessage(message, transfer);
}

type WasiFunction = (...args: number[]) => number;

function run({ module, name, stdin }: ThreadRun): void {
  const nulls = [openSync(devNull, "r"), openSync(devNull, "w"), openSync(devNull, "w")];
  let memory: WebAssembly.Memory | undefined;
  try {
    const wasi = new WASI({
      version: "preview1",
      args: [name],
      env: {},
      preopens: {},
      stdin: nulls[0],
      stdout: nulls[1],
      stderr: nulls[2],
      returnOnExit: true,
    });
    const base = wasi.wasiImport as Record<string, WasiFunction>;
    let stdinAt = 0;
    const isStdio = (fd: number) => fd >= 0 && fd <= 2;

    const imports: Record<string, WasiFunction> = {
      ...base,
      fd_write(fd, iovs, iovsLen, nwrittenPtr) {
        if (fd !== 1 && fd !== 2) return base.fd_write(fd, iovs, iovsLen, nwrittenPtr);
        const vecs = iovecs(memory, iovs, iovsLen);
        if (!vecs || !fits(memory, nwrittenPtr, 4)) return ERRNO_FAULT;
        const total = vecs.reduce((sum, v) => sum + v.len, 0);
        const data = new Uint8Array(total);
        const bytes = new Uint8Array(memory!.buffer);
        let at = 0;
        for (const v of vecs) {
          data.set(bytes.subarray(v.ptr, v.ptr + v.len), at);
          at += v.len;
        }
        if (total > 0) post({ t: fd === 1 ? "stdout" : "stderr", data }, [data.buffer]);
        new DataView(memory!.buffer).setUint32(nwrittenPtr, total, true);
        return ERRNO_SUCCESS;
      },
      fd_read(fd, iovs, iovsLen, nreadPtr) {
        if (fd !== 0) return base.fd_read(fd, iovs, iovsLen, nreadPtr);
        const vecs = iovecs(memory, iovs, iovsLen);
        if (!vecs || !fits(memory, nreadPtr, 4)) return ERRNO_FAULT;
        const bytes = new Uint8Array(memory!.buffer);
        let read = 0;
        for (const v of vecs) {
          const n = Math.min(v.len, stdin.length - stdinAt);
          bytes.set(stdin.subarray(stdinAt, stdinAt + n), v.ptr);
          stdinAt += n;
          read += n;
          if (n < v.len) break;
        }
        new DataView(memory!.buffer).setUint32(nreadPtr, read, true);
        return ERRNO_SUCCESS;
      },
      // Closing or renumbering stdio would close (or reuse) the null device's descriptors behind our back.
      fd_close: (fd) => (isStdio(fd) ? ERRNO_SUCCESS : base.fd_close(fd)),
      fd_renumber: (from, to) => (isStdio(from) || isStdio(to) ? ERRNO_BADF : base.fd_renumber(from, to)),
    };

    let instance: WebAssembly.Instance;
    try {
      instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: imports });
    } catch (e) {
      // A link error is the module's (it would fail everywhere); running out of memory is this machine's.
      const retryable = !(e instanceof WebAssembly.LinkError);
      return post({ t: "failed", message: `the module could not be instantiated: ${messageOf(e)}`, retryable });
    }
    const exported = instance.exports.memory;
    if (!(exported instanceof WebAssembly.Memory)) return post({ t: "failed", message: "the module exports no memory named \"memory\"", retryable: false });
    memory = exported;
    post({ t: "started" });
    try {
      const code = wasi.start(instance);
      post({ t: "exit", code: code ?? 0, memoryBytes: memory.buffer.byteLength });
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError || e instanceof RangeError) post({ t: "trap", message: `${e.name}: ${e.message}`, memoryBytes: memory.buffer.byteLength });
      else post({ t: "failed", message: messageOf(e), retryable: true });
    }
  } finally {
    for (const fd of nulls) closeSync(fd);
  }
}

function fits(memory: WebAssembly.Memory | undefined, ptr: number, len: number): boolean {
  return !!memory && ptr >= 0 && len >= 0 && ptr + len <= memory.buffer.byteLength;
}

/** The (pointer, length) pairs of a WASI iovec array, or null when any of it lies outside memory. */
function iovecs(memory: WebAssembly.Memory | undefined, iovs: number, count: number): Array<{ ptr: number; len: number }> | null {
  if (!memory || !fits(memory, iovs, count * 8)) return null;
  const view = new DataView(memory.buffer);
  const out = [];
  for (let i = 0; i < count; i++) {
    const ptr = view.getUint32(iovs + i * 8, true);
    const len = view.getUint32(iovs + i * 8 + 4, true);
    if (!fits(memory, ptr, len)) return null;
    out.push({ ptr, len });
  }
  return out;
}

parentPort?.once("message", (message: ThreadRun) => run(message));
