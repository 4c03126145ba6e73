// The publish route against mutated modules: bit flips, truncations, huge declared sizes, bad section lengths,
// spliced and shuffled bytes. Each is answered 200 (a module that still checks out), 400 with a JSON error, or 413
// (too big), never a 500 and never a crash; a seeded PRNG makes a failure reproducible (FARMHAND_SWEEP_SEED).
import { describe, expect, test } from "vitest";
import { APP_LIMITS } from "../../convex/core/appLimits";
import { MUTATIONS, SEED_MODULES as SEEDS } from "../unit/apps/mutants";
import { publish, publishingFarm } from "./appFarm";
import { answerOf } from "./setup";
import { seededRng, sweepSeed } from "./sweep/prng";

const SEED = sweepSeed(19_019);
const MODULES = 2_000;

describe("publish route fuzz", () => {
  test(`${MODULES} mutated modules: each answered 200, 400 or 413 with a JSON error, never a 500 (seed ${SEED})`, { timeout: 600_000 }, async () => {
    const farm = await publishingFarm();
    const rng = seededRng(SEED);
    const names = Object.keys(MUTATIONS);
    const seen = new Map<string, number>();
    for (let i = 0; i < MODULES; i++) {
      const how = names[i % names.length];
      const seedModule = SEEDS[rng.int(SEEDS.length)];
      let bytes = MUTATIONS[how](seedModule, rng);
      if (rng.chance(0.3)) bytes = MUTATIONS[rng.pick(names)](bytes.length > 8 ? bytes : seedModule, rng);
      const label = `module ${i} (${how}, seed ${SEED}, ${bytes.length} bytes)`;
      const res = await publish(farm, `fuzz-${i % 50}`, bytes);
      const answer = await answerOf(res);
      expect([200, 400, 413], label).toContain(res.status);
      if (res.status !== 200) {
        expect(typeof answer.error?.code, label).toBe("string");
        expect(typeof answer.error?.message, label).toBe("string");
      }
      const key = `${how}: ${res.status}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    // A module over the size cap, once: refused before anything reads it.
    const huge = new Uint8Array(APP_LIMITS.moduleBytesMax + 1);
    huge.set(SEEDS[0]);
    expect((await publish(farm, "fuzz-huge", huge)).status).toBe(413);
    const summary = [...seen].sort().map(([k, n]) => `${k} ×${n}`);
    console.log(`publish fuzz (seed ${SEED}): ${summary.join(", ")}`);
    // The fuzz reached both answers: some mutants still check out, most are refused.
    expect([...seen.keys()].some((k) => k.endsWith(": 200"))).toBe(true);
    expect([...seen.keys()].some((k) => k.endsWith(": 400"))).toBe(true);
  });
});
