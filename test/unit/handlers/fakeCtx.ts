import type { HandlerContext } from "../../../extension/worker/handler";

/** A HandlerContext that records what job code reports. */
export function fakeCtx(jobId = "j1") {
  const controller = new AbortController();
  const progress: Array<[number | undefined, string | undefined]> = [];
  const waiting: Array<{ status: string; resolve: () => void }> = [];
  let output = "";
  const ctx: HandlerContext = {
    jobId,
    attempt: 1,
    signal: controller.signal,
    progress: (p, s) => {
      progress.push([p, s]);
      for (const w of waiting) if (w.status === s) w.resolve();
    },
    output: (t) => void (output += t),
  };
  /** Resolves once the job code has reported this status (a test waits for what the child says, not for the clock). */
  const reported = (status: string) =>
    progress.some(([, s]) => s === status) ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ status, resolve }));
  return { ctx, controller, progress, output: () => output, reported };
}
