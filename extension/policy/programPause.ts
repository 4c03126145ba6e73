import type { Pausable } from "./idle/workWhileAway";
import { defaultMachineReaders, MachineWatch, type MachineReaders } from "./machineWatch";

/**
 * The headless worker's `--pause-while-running a,b`: while one of these programs runs, the running jobs are frozen
 * and nothing new is taken; once none runs, work goes on. Looked for every 10 s (as the extension does).
 */
export function pauseWhileRunning(
  engine: Pausable,
  programs: readonly string[],
  log: (line: string) => void,
  readers: MachineReaders = { ...defaultMachineReaders(), metered: () => Promise.resolve(undefined) },
  everyMs?: number,
): { dispose(): void } {
  // null until the first look: nothing is taken before it says none of the programs runs
  let holding: string | undefined | null = null;
  let warned = false;
  engine.pause("looking for the programs of --pause-while-running", { suspend: true });
  const watch = new MachineWatch(
    readers,
    () => ({ pause: programs, pauseGpu: [] }),
    (seen) => {
      if (seen.programsUnreadable && !warned) {
        warned = true;
        log("--pause-while-running: this machine's running programs cannot be read, so it cannot tell when they run");
      }
      if (seen.program === holding) return;
      if (seen.program !== undefined) {
        log(`${seen.program} is running: freezing running jobs, taking nothing new`);
        engine.pause(`${seen.program} is running`, { suspend: true });
      } else {
        if (holding !== null) log(`${holding} is no longer running: working again`);
        engine.resume();
      }
      holding = seen.program;
    },
    everyMs,
  );
  watch.start();
  return { dispose: () => watch.dispose() };
}
