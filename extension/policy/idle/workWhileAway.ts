import { AwayWatch } from "./awayWatch";
import type { MachineIdle } from "./machineIdle";

export type Pausable = { pause(reason: string, how?: { suspend?: boolean }): void; resume(): void };

/**
 * Work only while the machine's owner is away (`farmhand-worker --when-idle`): paused until the machine-wide idle
 * time reaches the threshold; the moment input is seen again the running jobs are frozen and nothing new is taken.
 * With no machine-wide idle source it cannot tell when the owner is away, so it takes no work and says why.
 * Call it right after `worker.start()` (which takes the running state at once), so nothing is claimed before the
 * first reading.
 */
export function workWhileAway(worker: Pausable, idle: MachineIdle, thresholdMs: number, log: (line: string) => void): { dispose(): void } {
  worker.pause("waiting until this machine is idle");
  const watch = new AwayWatch(idle, {
    thresholdMs: () => thresholdMs,
    onChange: (state) => {
      if (!state) {
        log("--when-idle: no machine-wide idle source answers on this machine, so it cannot tell when you are away; taking no work (run without --when-idle to work regardless)");
        worker.pause("no machine-wide idle source");
      } else if (state.away) {
        log(`this machine is idle (${state.reading.locked ? "screen locked" : `${Math.round(state.reading.idleMs / 1000)} s without input`}, read from ${state.reading.source}): working`);
        worker.resume();
      } else {
        const why = state.reading.fullscreen && state.reading.idleMs >= thresholdMs ? "a fullscreen application holds the screen" : "input on this machine";
        log(`${why} (read from ${state.reading.source}): freezing running jobs, taking nothing new`);
        worker.pause("you are using this machine", { suspend: true });
      }
    },
  });
  watch.start();
  return { dispose: () => watch.dispose() };
}
