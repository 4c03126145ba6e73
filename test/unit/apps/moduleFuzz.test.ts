// What a worker does with module bytes it did not make (the farm checks structure only): the memory and table
// rewrite, then compiling. 2 000 mutants: each is rewritten or refused with a WasmModuleError, and what is
// rewritten compiles or fails with a CompileError; nothing else is ever thrown.
import { describe, expect, it } from "vitest";
import { capMemory, WasmModuleError } from "../../../extension/handlers/apps/wasmMemory";
import { seededRng, sweepSeed } from "../../backend/sweep/prng";
import { MUTATIONS, SEED_MODULES } from "./mutants";

const SEED = sweepSeed(19_020);

describe("module bytes on the worker", () => {
  it(`2000 mutants: rewritten or refused with a WasmModuleError; compiled or a CompileError (seed ${SEED})`, async () => {
    const rng = seededRng(SEED);
    const names = Object.keys(MUTATIONS);
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 2_000; i++) {
      const how = names[i % names.length];
      const bytes = MUTATIONS[how](SEED_MODULES[rng.int(SEED_MODULES.length)], rng);
      let outcome: string;
      try {
        const capped = capMemory(bytes, 1024).bytes;
        try {
          await WebAssembly.compile(capped);
          outcome = "compiled";
        } catch (e) {
          expect(e, `mutant ${i} (${how}, seed ${SEED})`).toBeInstanceOf(WebAssembly.CompileError);
          outcome = "CompileError";
        }
      } catch (e) {
        if (!(e instanceof WasmModuleError)) throw new Error(`mutant ${i} (${how}, seed ${SEED}): ${String(e)}`);
        outcome = "WasmModuleError";
      }
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
    expect([...outcomes.keys()].sort()).toEqual(["CompileError", "WasmModuleError", "compiled"]);
  }, 120_000);
});
