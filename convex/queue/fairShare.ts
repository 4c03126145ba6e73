/**
 * Weighted fair share inside a priority level, as stride scheduling: every client key has a pass per level, and
 * each job handed out advances its key's pass by 1/weight; the next job goes to the key with the lowest pass (ties:
 * the key whose job is older). Inside a client key, its fairness keys share its turns the same way, and one
 * fairness key's jobs go in FIFO order. Passes are global (a key served in one lane has had its turn there), while
 * each lane keeps a virtual time of its own, the pass of the last job it handed out: a key that had nothing ready in
 * the lane comes back at that time, not below it, so idling banks no credit.
 *
 * Bound (a set K of keys backlogged on the same workers, total weight W): from when they start competing (equal
 * passes), of the N jobs handed out to them key k with weight w_k gets n_k with
 * N·w_k/W − |K|·w_k/W ≤ n_k ≤ N·w_k/W + 1: never a job ahead of its share, less than one per competing key behind;
 * over any other run of N of them, |n_k − N·w_k/W| ≤ 1 + |K|·w_k/W. Proof sketch: each backlogged key's pass lies
 * within one stride (1/w_k) above the lowest pass, and n_k = w_k·(its pass at the end − at the start).
 *
 * This file reads nothing: queue/fairRound.ts feeds it what the round read.
 */

/** A flow's head as a round sees it: where it is, whose it is, its key's and its own effective pass there. */
export type FlowHead = {
  lane: string;
  clientKey: string;
  fairnessKey: string;
  /** The client key's pass in this lane (its pass, or the lane's virtual time if that is later). */
  keyPass: number;
  /** The fairness key's pass inside its client key, in this lane (likewise). */
  flowPass: number;
  availableAt: number;
  createdAt: number;
};

/** Older first: the job that became ready first, ties by insertion. */
function fifo(a: FlowHead, b: FlowHead): number {
  return a.availableAt - b.availableAt || a.createdAt - b.createdAt;
}

/** The lower pass first, then the older job. */
function byPass(pass: (h: FlowHead) => number) {
  return (a: FlowHead, b: FlowHead) => pass(a) - pass(b) || fifo(a, b);
}

function least<T>(items: T[], compare: (a: T, b: T) => number): T {
  return items.reduce((best, item) => (compare(item, best) < 0 ? item : best));
}

/**
 * The next flow to hand a job from, among heads of one priority level: the (lane, client key) with the lowest key
 * pass (ties: its oldest head), then inside it the fairness key with the lowest pass (ties: the older head).
 * With one client key and no fairness keys every pass is equal and this is plain FIFO.
 */
export function pickFlow<T extends FlowHead>(heads: T[]): T | null {
  if (heads.length === 0) return null;
  // per (lane, client key): its oldest head stands for it, compared by the key's pass
  const pairs = new Map<string, T>();
  for (const head of heads) {
    const pair = `${head.lane}\u0000${head.clientKey}`;
    const seen = pairs.get(pair);
    if (!seen || fifo(head, seen) < 0) pairs.set(pair, head);
  }
  const chosen = least([...pairs.values()], byPass((h) => h.keyPass));
  const inside = heads.filter((h) => h.lane === chosen.lane && h.clientKey === chosen.clientKey);
  return least(inside, byPass((h) => h.flowPass));
}

/** Where a key stands when it is next served: its pass, or the lane's virtual time if it fell behind it. */
export function effectivePass(pass: number | undefined, clock: number | undefined): number {
  return Math.max(pass ?? 0, clock ?? 0);
}

/** The pass after one more job: one stride, 1/weight, further on. */
export function nextPass(effective: number, weight: number): number {
  return effective + 1 / weight;
}
