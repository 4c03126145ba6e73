// Every database operation of a Convex function reaches convex-test through the global `Convex.syscall` /
// `Convex.asyncSyscall` (installed by convex-test). The recorder wraps that global object once per process
// and hands each answered operation to the instruments of the frame it ran in; operations outside any frame
// (another convex-test in the same process) pass through untouched.
import { frames } from "./executions";

type ConvexGlobal = {
  syscall(op: string, argsJson: string): string;
  asyncSyscall(op: string, argsJson: string): Promise<string>;
  readonly jsSyscall?: unknown;
};

const recorderMark = Symbol.for("farmhand.testServer.syscallRecorder");
const schedulingOps = new Set(["1.0/schedule", "1.0/actions/schedule"]);

let underlying: ConvexGlobal | undefined;

/** Installs the recorder over convex-test's global (again if something replaced it). Idempotent. */
export function ensureSyscallRecorder(): void {
  const current = (globalThis as { Convex?: ConvexGlobal & { [recorderMark]?: true } }).Convex;
  if (current?.[recorderMark]) return;
  if (!current) throw new Error("convex-test has not installed the global Convex object yet: create the convexTest instance first");
  const convex = current;
  underlying = convex;
  (globalThis as { Convex?: unknown }).Convex = {
    [recorderMark]: true,
    syscall(op: string, argsJson: string): string {
      const result = convex.syscall(op, argsJson);
      const frame = frames.getStore();
      if (frame?.execution) frame.instruments.observe(frame.execution, op, argsJson, result);
      return result;
    },
    async asyncSyscall(op: string, argsJson: string): Promise<string> {
      const frame = frames.getStore();
      if (!frame) return await convex.asyncSyscall(op, argsJson);
      if (schedulingOps.has(op)) {
        // convex-test arms the scheduled function's timer inside this call: the timer, and so the scheduled
        // function, inherits the frame it is armed in, which names it as a scheduled caller.
        const launch = frame.instruments.scheduledOrigin();
        const result = await frames.run({ instruments: frame.instruments, origin: launch }, () => convex.asyncSyscall(op, argsJson));
        frame.instruments.scheduled(frame, launch, result);
        return result;
      }
      const result = await convex.asyncSyscall(op, argsJson);
      if (frame.execution) frame.instruments.observe(frame.execution, op, argsJson, result);
      return result;
    },
    get jsSyscall() {
      return convex.jsSyscall;
    },
  };
}

/** convex-test's own asyncSyscall, for the instruments' reads that must not land in any read set. */
export function unrecordedAsyncSyscall(op: string, argsJson: string): Promise<string> {
  if (!underlying) throw new Error("The syscall recorder is not installed");
  return underlying.asyncSyscall(op, argsJson);
}
