/** A small seeded PRNG (mulberry32) so a failing sweep reproduces from its seed. */
export type Rng = {
  next(): number;
  int(maxExclusive: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
};

export function seededRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (maxExclusive: number) => Math.floor(next() * maxExclusive);
  return { next, int, pick: (items) => items[int(items.length)], chance: (p) => next() < p };
}

/** The seed: FARMHAND_SWEEP_SEED when set (to replay a failure), else a fixed default. */
export function sweepSeed(fallback: number): number {
  const fromEnv = Number(process.env.FARMHAND_SWEEP_SEED);
  return Number.isInteger(fromEnv) ? fromEnv : fallback;
}
