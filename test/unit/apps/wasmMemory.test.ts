import { describe, expect, it } from "vitest";
import { capMemory, pagesForMegabytes, TABLE_ELEMENTS_MAX, WasmModuleError } from "../../../extension/handlers/apps/wasmMemory";
import { buildModule, FD_WRITE, op } from "./wasmBuilder";

const memoryOf = (bytes: Uint8Array) => {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
  return instance.exports.memory as WebAssembly.Memory;
};

describe("capMemory", () => {
  it("gives a memory without a maximum the cap as its maximum, so growing past it fails inside the module", () => {
    const { bytes, memories } = capMemory(buildModule({ memory: { min: 2 } }), 10);
    expect(memories).toEqual([{ imported: false, initial: 2, declaredMaximum: undefined, maximum: 10 }]);
    const memory = memoryOf(bytes);
    expect(memory.grow(8)).toBe(2);
    expect(() => memory.grow(1)).toThrow(RangeError);
    expect(memory.buffer.byteLength).toBe(10 * 65536);
  });

  it("lowers a larger declared maximum and keeps a smaller one", () => {
    expect(capMemory(buildModule({ memory: { min: 1, max: 100 } }), 10).memories[0]).toMatchObject({ declaredMaximum: 100, maximum: 10 });
    expect(capMemory(buildModule({ memory: { min: 1, max: 4 } }), 10).memories[0]).toMatchObject({ declaredMaximum: 4, maximum: 4 });
  });

  it("caps an imported memory too, and copies every other section byte for byte", () => {
    const original = buildModule({ imports: [FD_WRITE], memory: { min: 1, imported: true, exported: false }, data: [{ offset: 0, bytes: "hi" }] });
    const { bytes, memories } = capMemory(original, 3);
    expect(memories).toEqual([{ imported: true, initial: 1, declaredMaximum: undefined, maximum: 3 }]);
    // Only the limits grew by one byte (the maximum); the module still validates with the same imports.
    expect(bytes.length).toBe(original.length + 1);
    const mod = new WebAssembly.Module(bytes);
    expect(WebAssembly.Module.imports(mod).map((i) => `${i.module}.${i.name}`)).toEqual(["wasi_snapshot_preview1.fd_write", "env.memory"]);
  });

  it("keeps a declared maximum of zero pages", () => {
    const original = buildModule({ memory: { min: 0, max: 0 }, start: [...op.i32(0), ...op.drop] });
    expect(capMemory(original, 5).memories[0].maximum).toBe(0);
  });

  it("refuses a module that needs more memory at start than the cap", () => {
    expect(() => capMemory(buildModule({ memory: { min: 20 } }), 16)).toThrow(
      new WasmModuleError("the module needs 1.3 MB of memory at start, more than its memory limit of 1 MB"),
    );
  });

  it("refuses what is not a WebAssembly module, or is cut short", () => {
    expect(() => capMemory(new TextEncoder().encode("#!/bin/sh\necho hi\n"), 16)).toThrow(/not a WebAssembly module/);
    expect(() => capMemory(Uint8Array.from([0, 0x61, 0x73, 0x6d, 2, 0, 0, 0]), 16)).toThrow(/unsupported WebAssembly binary version/);
    const whole = buildModule({ memory: { min: 1 } });
    expect(() => capMemory(whole.subarray(0, whole.length - 3), 16)).toThrow(/truncated/);
    const memory64 = Uint8Array.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 5, 3, 1, 0x04, 1]);
    expect(() => capMemory(memory64, 16)).toThrow(/64-bit memories are not supported/);
  });

  it("caps tables: one without a maximum gets TABLE_ELEMENTS_MAX, table.grow past it answers -1; a bigger initial size is refused", () => {
    // _start grows the table by `delta` and stores the answer at address 0.
    const grower = (delta: number, table: { min: number; max?: number }) =>
      buildModule({ table, start: [...op.i32(0), ...op.tableGrowNull(op.i32(delta)), ...op.i32Store] });
    const answerOf = (bytes: Uint8Array) => {
      const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
      (instance.exports._start as () => void)();
      return new Int32Array((instance.exports.memory as WebAssembly.Memory).buffer)[0];
    };
    expect(answerOf(grower(TABLE_ELEMENTS_MAX, { min: 1 }))).toBe(1); // uncapped, it grows
    expect(answerOf(capMemory(grower(TABLE_ELEMENTS_MAX, { min: 1 }), 16).bytes)).toBe(-1);
    expect(answerOf(capMemory(grower(TABLE_ELEMENTS_MAX - 1, { min: 1 }), 16).bytes)).toBe(1);
    expect(answerOf(capMemory(grower(5, { min: 1, max: 4 }), 16).bytes)).toBe(-1); // a smaller maximum stays
    expect(() => capMemory(grower(0, { min: TABLE_ELEMENTS_MAX + 1 }), 16)).toThrow(new WasmModuleError(`the module declares a table of ${TABLE_ELEMENTS_MAX + 1} elements; at most ${TABLE_ELEMENTS_MAX} are allowed`));
    // An imported table's limits are rewritten too: the import now asks for a maximum.
    const imported = capMemory(buildModule({ table: { min: 1, imported: true } }), 16).bytes;
    const { Table } = WebAssembly as unknown as { Table: new (d: { element: string; initial: number; maximum?: number }) => object };
    const link = (table: object) => new WebAssembly.Instance(new WebAssembly.Module(imported), { env: { table } });
    expect(() => link(new Table({ element: "anyfunc", initial: 1 }))).toThrow(WebAssembly.LinkError);
    expect(() => link(new Table({ element: "anyfunc", initial: 1, maximum: TABLE_ELEMENTS_MAX }))).not.toThrow();
  });

  it("converts megabytes to pages", () => {
    expect(pagesForMegabytes(1)).toBe(16);
    expect(pagesForMegabytes(2048)).toBe(32768);
  });
});
