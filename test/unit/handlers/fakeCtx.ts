import type { HandlerContext } from "../../../extension/worker/handler";

/** A HandlerContext that records what job code reports. */
export function fakeCtx(jobId = "j1") {
  const controller = new AbortController();
  const progress: Array<[number | undefined, string | undefined]> = [];
  let output = "";
  const ctx: HandlerContext = {
    jobId,
    attempt: 1,
    signal: controller.signal,
    progress: (p, s) => void progress.push([p, s]),
    output: (t) => void (output += t),
  };
  return { ctx, controller, progress, output: () => output };
}
