// Heat (issue 23): a fake sysfs root whose CPU temperature the test sets; the real thermal reading, heat gate and
// policy decide, and a real engine's job process is frozen above the limit and thawed only 5 °C below it.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createBuiltinRegistry } from "../../../extension/handlers";
import { PRIMES_MAX_N } from "../../../extension/handlers/impl/primes";
import { decide, freezesJobs } from "../../../extension/policy/policy";
import { HeatGate, HeatWatch, readThermal } from "../../../extension/policy/thermal";
import { Worker } from "../../../extension/worker/worker";
import { policyInputs } from "../../unit/policy/inputs";
import { ScriptedFarm } from "../../unit/worker/scriptedFarm";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function procState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
}

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(10);
  }
}

describe.runIf(process.platform === "linux")("the CPU temperature limit, on a fake sysfs", () => {
  it("a rising temperature freezes the running job; it thaws only below the limit minus 5 °C", async () => {
    const root = mkdtempSync(join(tmpdir(), "farmhand-sysfs-"));
    mkdirSync(join(root, "hwmon", "hwmon3"), { recursive: true });
    writeFileSync(join(root, "hwmon", "hwmon3", "name"), "coretemp\n");
    const setCelsius = (c: number) => writeFileSync(join(root, "hwmon", "hwmon3", "temp1_input"), `${c * 1000}\n`);
    setCelsius(70);

    const { registry, pool } = createBuiltinRegistry({ ollama: false, pool: { maxIdle: 1 } });
    const farm = new ScriptedFarm();
    const worker = new Worker({ client: farm, handlers: registry, concurrency: 1, suspendLimitMs: 60 * 60_000, onlyCapabilities: ["demo.primes"] });
    farm.offer("demo.primes", { n: PRIMES_MAX_N }, 60_000);
    const reasons: string[] = [];
    // as the donor does: the gate's verdict goes through the policy; the full preset (no freeze on return) still freezes for heat
    const watch = new HeatWatch(
      new HeatGate(85),
      (tooHot) => {
        const decision = decide(policyInputs({ now: Date.now(), windows: [], tooHot, cpuCelsius: watch.latest?.celsius, maxCpuCelsius: 85 }));
        if (decision.donate) worker.resume();
        else if ("reason" in decision) {
          reasons.push(decision.reason);
          worker.pause(decision.reason, { suspend: freezesJobs(decision, false) });
        }
      },
      100,
      () => readThermal("linux", root),
    );
    try {
      await worker.start();
      watch.start();
      await until("the job runs", () => worker.snapshot().running.length === 1 && pool.pids.length === 1);
      const [pid] = pool.pids;
      setCelsius(92);
      await until("the job is frozen", () => procState(pid) === "T", 5_000);
      expect(reasons).toEqual(["too hot: the CPU is at 92 °C (limit 85 °C, resumes below 80 °C)"]);
      setCelsius(83); // under the limit, not 5 °C under it: stays frozen
      await sleep(600);
      expect(procState(pid)).toBe("T");
      setCelsius(79);
      await until("the job is thawed", () => procState(pid) !== "T", 5_000);
      expect(worker.state).toBe("running");
    } finally {
      watch.dispose();
      await worker.stop();
      pool.close();
    }
  });
});
