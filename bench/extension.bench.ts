import { spawnSync } from "node:child_process";
import { expect, it } from "vitest";
import type { ThreadSpan } from "../test/host/bench/activationTiming";
import type { ActivationSample, HostBenchResult } from "../test/host/bench/measure";
import type { MemorySample } from "../test/host/bench/memory";
import { saveFigures, type Figure } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/extension.bench.ts", "extension", "media", "test/host/bench"];

/**
 * Farmhand's activation in units of a fixed piece of reference work timed right before it in the same host
 * (test/host/bench/measure.ts): its own time (wall time without the host's waits for a CPU behind other programs)
 * over the reference work's CPU time, for each of 48 activations (deactivated as VS Code does and activated again
 * with the same context, once the host is quiet); the figure is their lower quartile, since a busy machine only ever
 * adds time. On a 2-core machine at load 11–41 it was 0.43–0.58; a 30 ms sleep planted in activate() made it
 * 0.88–0.92.
 */
const ACTIVATION_RATIO_MAX = 0.7;

const lowerQuartile = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 4)];
/** A span's own time: its wall time without the host's waits for a CPU behind other programs. */
const own = (span: ThreadSpan) => span.wallMs - span.cpuWaitMs;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

// What Farmhand costs the extension host a donor's editor runs in, measured in a real one (code-server): activation
// time against an empty extension's and a fixed piece of work's in the same host, and the host's memory against a
// window without Farmhand — activated, donating while idle, and with two demo.primes jobs running (their handler
// processes are counted apart: they are not the host).
it("measures activation and the extension host's memory in code-server", () => {
  const run = spawnSync(process.execPath, ["test/harness/run-host-bench.mjs"], { encoding: "utf8", timeout: 400_000 });
  const line = run.stdout.split("\n").find((l) => l.startsWith("FARMHAND_BENCH "));
  expect(run.status, `run-host-bench failed:\n${run.stdout}${run.stderr}`).toBe(0);
  expect(line, "run-host-bench printed no figures").toBeDefined();
  const { baseline, farmhand, activations } = JSON.parse(line!.slice("FARMHAND_BENCH ".length)) as {
    baseline: HostBenchResult;
    farmhand: HostBenchResult;
    activations: ActivationSample[];
  };
  const bare = baseline.phases.baseline;
  const { activated, donatingIdle, working2Jobs } = farmhand.phases;
  const round = (value: number) => Math.round(value * 10) / 10;
  const added = (sample: MemorySample, field: "rssMb" | "heapUsedMb"): Figure => ({ value: round(sample[field] - bare[field]), unit: "MB" });
  const handlers = working2Jobs.children.filter((c) => c.command.includes("handlerRunner"));
  expect(handlers.length, "two handler processes while two jobs run").toBe(2);
  // Activations vary with what the machine does meanwhile: the target's figure is a lower quartile, the others medians.
  const again = activations.flatMap((a) => a.again);
  expect(again.length, "activated again in the activation-only windows").toBeGreaterThanOrEqual(24);
  const ratios = again.map((pair) => own(pair.farmhand) / pair.reference.cpuMs);
  expect(ratios.every(Number.isFinite), `activation samples: ${JSON.stringify(activations)}`).toBe(true);
  const ratio = Math.round(lowerQuartile(ratios) * 100) / 100;
  const medianOf = <T>(samples: T[], pick: (sample: T) => number) => round(median(samples.map(pick)));

  saveFigures("extension", {
    activation_ratio_lower_quartile: {
      value: ratio,
      unit: `× the reference work's CPU time right before it (Farmhand's activation without the host's waits for a CPU; lower quartile of ${again.length} activations)`,
      target: `≤ ${ACTIVATION_RATIO_MAX}`,
      pass: ratio <= ACTIVATION_RATIO_MAX,
    },
    activation_again_own_median: { value: medianOf(again, (p) => own(p.farmhand)), unit: "ms (activated again: its module loaded; without the host's waits for a CPU)" },
    reference_work_cpu_median: { value: medianOf(again, (p) => p.reference.cpuMs), unit: "ms" },
    activation_first_median: { value: medianOf(activations, (a) => a.farmhand.wallMs), unit: `ms (first activation, wall: moves with the machine's load; ${activations.length} windows)` },
    activation_first_own_median: { value: medianOf(activations, (a) => own(a.farmhand)), unit: "ms (first activation, without the host's waits for a CPU)" },
    empty_extension_activation_own_median: { value: medianOf(activations, (a) => own(a.empty)), unit: "ms (first activation, same host)" },
    host_heap_baseline: { value: bare.heapUsedMb, unit: "MB" },
    host_rss_baseline: { value: bare.rssMb, unit: "MB" },
    host_heap_added_activated: added(activated, "heapUsedMb"),
    host_heap_added_idle_donating: added(donatingIdle, "heapUsedMb"),
    host_heap_added_working_2_jobs: added(working2Jobs, "heapUsedMb"),
    host_rss_added_activated: added(activated, "rssMb"),
    host_rss_added_idle_donating: added(donatingIdle, "rssMb"),
    host_rss_added_working_2_jobs: added(working2Jobs, "rssMb"),
    handler_processes_rss_2_jobs: { value: round(handlers.reduce((sum, c) => sum + c.rssMb, 0)), unit: "MB" },
  }, MEASURES);
});
