import { eachCall, type CallArgs, type CallName, type CallResult, type DoorbellValue, type FarmClient } from "../../../extension/worker/farmClient";

export type Answers = { [K in CallName]?: (args: CallArgs<K>) => Promise<CallResult<K>> | CallResult<K> };

const DEFAULTS: { [K in CallName]: () => CallResult<K> } = {
  claim: () => [],
  ready: () => ({ waitingFor: 0 }),
  presence: () => ({ lastSeenAt: 0 }),
  heartbeat: () => ({ cancel: false, leaseExpiresAt: Date.now() + 60_000 }),
  output: () => ({ seq: 1 }),
  checkpoint: () => ({ bytes: 0 }),
  complete: () => ({ status: "succeeded" }),
  fail: () => ({ status: "dead", availableAt: undefined }),
  release: () => ({ status: "pending" }),
  reportFacts: () => ({ changed: true }),
  inputs: () => ({ page: [], cursor: null, done: true }),
};

/**
 * The small fake: typed from the same table as the real client, it records what was sent and answers what a
 * test scripts (or a plain success). It keeps no rules of the server's; tests that need those use the test server.
 */
export function recordingFarm(answers: Answers = {}) {
  const calls: Array<{ name: CallName | "doorbell"; args: unknown }> = [];
  let bell: { onValue: (v: DoorbellValue) => void; onError: (e: Error) => void } | undefined;
  const client: FarmClient = {
    ...eachCall(
      <K extends CallName>(name: K) =>
        (async (args: CallArgs<K>) => {
          calls.push({ name, args });
          const answer = answers[name];
          return answer ? answer(args) : DEFAULTS[name]();
        }) as unknown as FarmClient[K],
    ),
    doorbell: (onValue, onError) => {
      calls.push({ name: "doorbell", args: {} });
      bell = { onValue, onError };
      return () => (bell = undefined);
    },
  };
  return {
    client,
    calls,
    /** The arguments of every call of this name, in order. */
    sent: <K extends CallName>(name: K) => calls.filter((c) => c.name === name).map((c) => c.args as CallArgs<K>),
    names: () => calls.map((c) => c.name),
    ring: (v: DoorbellValue) => bell?.onValue(v),
    bellError: (e: Error) => bell?.onError(e),
    get subscribed() {
      return bell !== undefined;
    },
  };
}

/** A clock whose timers fire only when the test says so. */
export function manualClock() {
  let now = 0;
  let seq = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  return {
    now: () => now,
    setTimeout: (fn: () => void, ms: number) => {
      timers.set(++seq, { at: now + ms, fn });
      return seq;
    },
    clearTimeout: (id: unknown) => void timers.delete(id as number),
    get pending() {
      return [...timers.values()].map((t) => t.at - now);
    },
    /** Move time on by `ms`, firing each timer due meanwhile (in order). */
    advance(ms: number) {
      const until = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].fn();
      }
      now = until;
    },
  };
}
