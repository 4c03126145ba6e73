import { v, type Infer } from "convex/values";
import { fail } from "../core/errors";
import { FACT_LIMITS, gpuVendor, type MachineFacts } from "./facts";

/**
 * What a job needs of the machine that runs it (jobs:submit `requirements`). `minVramMB` is for one GPU; a
 * `gpu` without fields asks for any GPU the worker reported.
 */
export const jobRequirements = v.object({
  minMemoryMB: v.optional(v.number()),
  minCores: v.optional(v.number()),
  gpu: v.optional(v.object({ vendor: v.optional(gpuVendor), minVramMB: v.optional(v.number()) })),
});
export type JobRequirements = Infer<typeof jobRequirements>;

/**
 * The class of machine a lane stands for: each amount rounded up to a power of two, so that jobs asking for
 * 3, 3.5 and 4 GB share one lane and a claim still reads one head per lane, however many jobs with other needs wait.
 */
export const requirementClass = v.object({
  memoryMB: v.optional(v.number()),
  cores: v.optional(v.number()),
  gpu: v.optional(v.object({ vendor: v.optional(gpuVendor), vramMB: v.optional(v.number()) })),
});
export type RequirementClass = Infer<typeof requirementClass>;

/** Validate a job's requirements (invalid_argument naming the field); undefined when it asks for nothing. */
export function checkRequirements(r: JobRequirements | undefined): JobRequirements | undefined {
  if (r === undefined) return undefined;
  const whole = (value: number | undefined, name: string, max: number) => {
    if (value === undefined) return undefined;
    if (!Number.isInteger(value) || value < 1 || value > max) fail("invalid_argument", `requirements.${name} must be a whole number from 1 to ${max}, got ${value}`);
    return value;
  };
  const checked: JobRequirements = {};
  const minMemoryMB = whole(r.minMemoryMB, "minMemoryMB", FACT_LIMITS.memoryMB);
  const minCores = whole(r.minCores, "minCores", FACT_LIMITS.cores);
  if (minMemoryMB !== undefined) checked.minMemoryMB = minMemoryMB;
  if (minCores !== undefined) checked.minCores = minCores;
  if (r.gpu !== undefined) {
    const minVramMB = whole(r.gpu.minVramMB, "gpu.minVramMB", FACT_LIMITS.vramMB);
    checked.gpu = {};
    if (r.gpu.vendor !== undefined) checked.gpu.vendor = r.gpu.vendor;
    if (minVramMB !== undefined) checked.gpu.minVramMB = minVramMB;
  }
  return Object.keys(checked).length > 0 ? checked : undefined;
}

/** The smallest power of two at or above n (n ≥ 1). */
function powerOfTwoAtLeast(n: number): number {
  return 2 ** Math.ceil(Math.log2(n));
}

export function classOf(r: JobRequirements | undefined): RequirementClass | undefined {
  if (!r) return undefined;
  const c: RequirementClass = {};
  if (r.minMemoryMB !== undefined) c.memoryMB = powerOfTwoAtLeast(r.minMemoryMB);
  if (r.minCores !== undefined) c.cores = powerOfTwoAtLeast(r.minCores);
  if (r.gpu) {
    c.gpu = {};
    if (r.gpu.vendor !== undefined) c.gpu.vendor = r.gpu.vendor;
    if (r.gpu.minVramMB !== undefined) c.gpu.vramMB = powerOfTwoAtLeast(r.gpu.minVramMB);
  }
  return c;
}

/** The class as it ends a lane's routing key: "mem>=4096,cores>=4,gpu:nvidia>=8192" ("gpu" alone: any GPU). */
export function classKey(c: RequirementClass): string {
  const parts: string[] = [];
  if (c.memoryMB !== undefined) parts.push(`mem>=${c.memoryMB}`);
  if (c.cores !== undefined) parts.push(`cores>=${c.cores}`);
  if (c.gpu) parts.push(`gpu${c.gpu.vendor ? `:${c.gpu.vendor}` : ""}${c.gpu.vramMB !== undefined ? `>=${c.gpu.vramMB}` : ""}`);
  return parts.join(",");
}

/**
 * A machine counts as holding a memory class when it reports at least 15/16 of it: a machine sold with 16 GB
 * reports a little less (the firmware and the kernel keep some), and still belongs to the 16 GB class.
 */
const NOMINAL = 15 / 16;

/**
 * A card counts as holding a VRAM class from 7/8 of it: with ECC on, a GDDR6 card gives 1/16 of its memory to
 * the check bits and the driver keeps a little more (a 16 GB T4 reports 15,360 MiB, on some drivers 15,109), so
 * 15/16 would leave such cards out. The next smaller common size (12 GB of 16, 24 of 32, 48 of 64) is 3/4.
 */
const NOMINAL_VRAM = 7 / 8;

/** Whether a worker's reported facts meet a lane's class. A worker that reported nothing meets no requirement. */
export function meetsClass(facts: MachineFacts | undefined, c: RequirementClass | undefined): boolean {
  if (!c) return true;
  if (!facts) return false;
  if (c.memoryMB !== undefined && facts.memoryMB < c.memoryMB * NOMINAL) return false;
  if (c.cores !== undefined && facts.cores < c.cores) return false;
  const gpu = c.gpu;
  if (gpu) {
    const fits = facts.gpus.some((g) => (gpu.vendor === undefined || g.vendor === gpu.vendor) && (gpu.vramMB === undefined || g.vramMB >= gpu.vramMB * NOMINAL_VRAM));
    if (!fits) return false;
  }
  return true;
}
