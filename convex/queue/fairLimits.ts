import { fail } from "../core/errors";

/**
 * What fair share accepts (docs/API.md "Sharing the farm"): a job's fairness key, a client key's weight and
 * maxRunning, its fairness-key weight overrides. Checks throw invalid_argument (too_large for a fairness key
 * over 64 bytes) before anything is written.
 */
export const FAIR = {
  fairnessKeyBytes: 64,
  weightMin: 0.001,
  weightMax: 1000,
  /** Fairness-key weights one client key may set (Temporal's limit). */
  fairnessWeightsPerKey: 1000,
  maxRunningMax: 1_000_000,
  /**
   * Flows (a client key's jobs of one fairness key in one lane) one dispatch round or claim reads at most, shared
   * by the lanes with work: each costs an index read or three, and a round must stay well inside a mutation's time.
   * Past it, the next round reads on from where this one stopped.
   */
  flowsPerRound: 128,
} as const;

const utf8 = new TextEncoder();

export function checkFairnessKey(value: string, name = "fairnessKey"): string {
  const bytes = utf8.encode(value).length;
  if (bytes === 0) fail("invalid_argument", `${name} must not be empty (leave it out for none)`);
  if (bytes > FAIR.fairnessKeyBytes) fail("too_large", `${name} is ${bytes} bytes; at most ${FAIR.fairnessKeyBytes}`);
  return value;
}

export function checkWeight(value: number, name = "weight"): number {
  if (!(Number.isFinite(value) && value >= FAIR.weightMin && value <= FAIR.weightMax)) {
    fail("invalid_argument", `${name} must be a number from ${FAIR.weightMin} to ${FAIR.weightMax}, got ${value}`);
  }
  return value;
}

export function checkMaxRunning(value: number): number {
  if (!(Number.isInteger(value) && value >= 0 && value <= FAIR.maxRunningMax)) {
    fail("invalid_argument", `maxRunning must be a whole number from 0 to ${FAIR.maxRunningMax}, got ${value}`);
  }
  return value;
}

export type FairnessWeight = { fairnessKey: string; weight: number };

/** At most FAIR.fairnessWeightsPerKey entries, each key once, each key and weight valid. */
export function checkFairnessWeights(entries: FairnessWeight[]): FairnessWeight[] {
  if (entries.length > FAIR.fairnessWeightsPerKey) {
    fail("invalid_argument", `fairnessWeights holds ${entries.length} entries; at most ${FAIR.fairnessWeightsPerKey}`);
  }
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    checkFairnessKey(entry.fairnessKey, `fairnessWeights[${i}].fairnessKey`);
    checkWeight(entry.weight, `fairnessWeights[${i}].weight`);
    if (seen.has(entry.fairnessKey)) fail("invalid_argument", `fairnessWeights names "${entry.fairnessKey.slice(0, 64)}" twice`);
    seen.add(entry.fairnessKey);
  });
  return entries;
}
