/**
 * Which documents a function read, by id: a thin wrapper around the `Convex.asyncSyscall` global that
 * convex-test installs (every db.get and every row of a query stream passes through it). Used by the
 * comparison bench to find two claims of one round reading the same job document.
 */
type AsyncSyscall = (op: string, jsonArgs: string) => Promise<string>;
type ConvexGlobal = { syscall: unknown; asyncSyscall: AsyncSyscall; jsSyscall: unknown };

type Doc = Record<string, unknown>;

let reading: Map<string, Doc> | null = null;

function note(op: string, result: string) {
  if (!reading) return;
  const parsed = JSON.parse(result) as (Doc & { value?: Doc | null; page?: Doc[] }) | null;
  const docs =
    op === "1.0/get" ? [parsed] : op === "1.0/queryStreamNext" ? [parsed?.value] : op === "1.0/queryPage" ? (parsed?.page ?? []) : [];
  for (const doc of docs) if (doc && typeof doc._id === "string") reading.set(doc._id, doc);
}

/** Wrap the global once; convex-test must have run a function already so that its global exists. */
export function installReadRecorder(): void {
  const g = globalThis as unknown as { Convex?: ConvexGlobal; __readRecorder?: boolean };
  if (g.__readRecorder) return;
  const original = g.Convex;
  if (!original) throw new Error("installReadRecorder: run one convex-test function first");
  g.Convex = {
    get syscall() {
      return original.syscall;
    },
    get jsSyscall() {
      return original.jsSyscall;
    },
    get asyncSyscall(): AsyncSyscall {
      const inner = original.asyncSyscall;
      return async (op, jsonArgs) => {
        const result = await inner(op, jsonArgs);
        note(op, result);
        return result;
      };
    },
  };
  g.__readRecorder = true;
}

/** Run `fn` and return what it returned with every document it read (calls must not overlap). */
export async function recordReads<T>(fn: () => Promise<T>): Promise<{ result: T; docs: Map<string, Record<string, unknown>> }> {
  const docs = new Map<string, Record<string, unknown>>();
  reading = docs;
  try {
    return { result: await fn(), docs };
  } finally {
    reading = null;
  }
}
