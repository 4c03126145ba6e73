import { v, type Infer } from "convex/values";
import { fail } from "../core/errors";

/**
 * What a worker's machine has, measured there and reported by the worker (workers:enroll, workers:reportFacts).
 * GPUs the worker could not measure are left out (unknown), never guessed.
 */
export const gpuVendor = v.union(v.literal("nvidia"), v.literal("amd"), v.literal("apple"), v.literal("intel"), v.literal("other"));

export const machineFacts = v.object({
  cores: v.number(),
  memoryMB: v.number(),
  os: v.string(),
  arch: v.string(),
  gpus: v.array(v.object({ vendor: gpuVendor, model: v.string(), vramMB: v.number() })),
});

export type MachineFacts = Infer<typeof machineFacts>;

export const FACT_LIMITS = {
  cores: 4_096,
  /** 64 TiB */
  memoryMB: 64 * 1024 * 1024,
  gpus: 16,
  /** 1 TiB */
  vramMB: 1024 * 1024,
  textChars: 128,
} as const;

/** Validate reported facts; throws invalid_argument naming the field. */
export function checkFacts(facts: MachineFacts): MachineFacts {
  const whole = (value: number, name: string, min: number, max: number) => {
    if (!Number.isInteger(value) || value < min || value > max) fail("invalid_argument", `facts.${name} must be a whole number from ${min} to ${max}, got ${value}`);
    return value;
  };
  const text = (value: string, name: string) => {
    if (value.trim().length === 0 || value.length > FACT_LIMITS.textChars) {
      fail("invalid_argument", `facts.${name} must be text of 1 to ${FACT_LIMITS.textChars} characters`);
    }
    return value;
  };
  if (facts.gpus.length > FACT_LIMITS.gpus) fail("invalid_argument", `facts.gpus: at most ${FACT_LIMITS.gpus} GPUs`);
  return {
    cores: whole(facts.cores, "cores", 1, FACT_LIMITS.cores),
    memoryMB: whole(facts.memoryMB, "memoryMB", 1, FACT_LIMITS.memoryMB),
    os: text(facts.os, "os"),
    arch: text(facts.arch, "arch"),
    gpus: facts.gpus.map((gpu, i) => ({
      vendor: gpu.vendor,
      model: text(gpu.model, `gpus[${i}].model`),
      vramMB: whole(gpu.vramMB, `gpus[${i}].vramMB`, 0, FACT_LIMITS.vramMB),
    })),
  };
}

/** Field by field (a stored document need not keep the order its fields were written in). */
export function sameFacts(a: MachineFacts | undefined, b: MachineFacts | undefined): boolean {
  if (!a || !b) return a === b;
  const sameGpus =
    a.gpus.length === b.gpus.length && a.gpus.every((g, i) => g.vendor === b.gpus[i].vendor && g.model === b.gpus[i].model && g.vramMB === b.gpus[i].vramMB);
  return a.cores === b.cores && a.memoryMB === b.memoryMB && a.os === b.os && a.arch === b.arch && sameGpus;
}
