import { execFile } from "node:child_process";
import { arch, cpus, platform, totalmem } from "node:os";
import type { FunctionArgs } from "convex/server";
import type { api } from "../../convex/_generated/api";

/** What this machine has, in the shape the farm takes it (workers:reportFacts). */
export type MachineFacts = FunctionArgs<typeof api.workers.reportFacts>["facts"];
export type Gpu = MachineFacts["gpus"][number];

/** Runs a command; resolves its stdout, or undefined when it cannot be run or fails. */
export type RunCommand = (command: string, args: string[]) => Promise<string | undefined>;

const NVIDIA_QUERY = ["--query-gpu=name,memory.total", "--format=csv,noheader,nounits"];

/**
 * Measure this machine: cores, memory, OS, architecture, and the NVIDIA GPUs `nvidia-smi` lists (name and memory).
 * Other GPUs are left out: unknown, not guessed. Never throws; a missing or failing `nvidia-smi` means no GPUs known.
 */
export async function measureFacts(run: RunCommand = runCommand): Promise<MachineFacts> {
  return {
    cores: Math.max(1, cpus().length),
    memoryMB: Math.max(1, Math.floor(totalmem() / (1024 * 1024))),
    os: platform(),
    arch: arch(),
    gpus: parseNvidiaSmi(await run("nvidia-smi", NVIDIA_QUERY)),
  };
}

/** `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits`: one "name, MiB" line per GPU. */
export function parseNvidiaSmi(out: string | undefined): Gpu[] {
  const gpus: Gpu[] = [];
  for (const line of (out ?? "").split(/\r?\n/)) {
    const comma = line.lastIndexOf(",");
    if (comma <= 0) continue;
    const model = line.slice(0, comma).trim().slice(0, 128);
    const vramMB = Number(line.slice(comma + 1).trim());
    if (!model || !Number.isInteger(vramMB) || vramMB < 0) continue;
    gpus.push({ vendor: "nvidia", model, vramMB });
  }
  return gpus.slice(0, 16);
}

function runCommand(command: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 5_000, windowsHide: true }, (error, stdout) => resolve(error ? undefined : stdout));
  });
}
