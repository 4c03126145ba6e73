import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { delimiter, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { measureFacts, parseNvidiaSmi } from "../../../extension/worker/machineFacts";

/** Puts a fake `nvidia-smi` first on PATH: a shell script that checks its arguments and prints `out` (or fails). */
function fakeNvidiaSmi(dir: string, script: string): void {
  const path = join(dir, "nvidia-smi");
  writeFileSync(path, `#!/bin/sh\n${script}\n`);
  chmodSync(path, 0o755);
}

const EXPECTED_ARGS = `[ "$1" = "--query-gpu=name,memory.total" ] && [ "$2" = "--format=csv,noheader,nounits" ] || { echo "bad args: $*" >&2; exit 9; }`;

describe.runIf(process.platform !== "win32")("measureFacts with a fake nvidia-smi on PATH", () => {
  let dir: string;
  let path: string | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "farmhand-facts-"));
    path = process.env.PATH;
    process.env.PATH = `${dir}${delimiter}${path ?? ""}`;
  });
  afterEach(() => {
    process.env.PATH = path;
    rmSync(dir, { recursive: true, force: true });
  });

  it("measures cores, memory, OS and architecture, and one NVIDIA GPU", async () => {
    fakeNvidiaSmi(dir, `${EXPECTED_ARGS}\necho "NVIDIA GeForce RTX 3080, 10240"`);
    const facts = await measureFacts();
    expect(facts).toEqual({
      cores: cpus().length,
      memoryMB: Math.floor(totalmem() / 1024 / 1024),
      os: process.platform,
      arch: process.arch,
      gpus: [{ vendor: "nvidia", model: "NVIDIA GeForce RTX 3080", vramMB: 10240 }],
    });
  });

  it("lists two GPUs in nvidia-smi's order", async () => {
    fakeNvidiaSmi(dir, `${EXPECTED_ARGS}\nprintf 'NVIDIA A100-SXM4-80GB, 81920\\nTesla T4, 15360\\n'`);
    expect((await measureFacts()).gpus).toEqual([
      { vendor: "nvidia", model: "NVIDIA A100-SXM4-80GB", vramMB: 81920 },
      { vendor: "nvidia", model: "Tesla T4", vramMB: 15360 },
    ]);
  });

  it("knows no GPU when nvidia-smi fails (no driver loaded)", async () => {
    fakeNvidiaSmi(dir, `echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." ; exit 9`);
    const facts = await measureFacts();
    expect(facts.gpus).toEqual([]);
    expect(facts.cores).toBeGreaterThan(0);
  });
});

describe("parseNvidiaSmi", () => {
  it("keeps well-formed lines only (names may hold commas), and nothing from no output", () => {
    expect(parseNvidiaSmi("Quadro RTX 8000, Rev A, 49152\r\n\n[N/A], [N/A]\nGPU, lots\n")).toEqual([
      { vendor: "nvidia", model: "Quadro RTX 8000, Rev A", vramMB: 49152 },
    ]);
    expect(parseNvidiaSmi(undefined)).toEqual([]);
    expect(parseNvidiaSmi("")).toEqual([]);
  });
});
