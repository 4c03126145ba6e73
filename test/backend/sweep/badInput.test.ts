import { afterEach, expect, test, vi } from "vitest";
import type { FunctionReference } from "convex/server";
import { newBackend } from "../setup";
import { PUBLIC_FUNCTIONS, type Worlds } from "./catalogue";
import { checkConsistency } from "./consistency";
import { fullSnapshot, verdict } from "./judge";
import { malformedCall, type Call } from "./mutate";
import { outcomeOf, type Outcome } from "./outcome";
import { seededRng, sweepSeed } from "./prng";
import { buildOrgWorld } from "./world";

const SEED = sweepSeed(20261122);
const REFUSAL_CALLS = 4_000;
const MIXED_CALLS = 2_000;

afterEach(() => {
  vi.useRealTimers();
});

async function run(t: ReturnType<typeof newBackend>, call: Call): Promise<Outcome> {
  return await outcomeOf(() =>
    call.fn.kind === "query"
      ? t.query(call.fn.ref as FunctionReference<"query">, call.args)
      : t.mutation(call.fn.ref as FunctionReference<"mutation">, call.args),
  );
}

async function worlds(t: ReturnType<typeof newBackend>): Promise<Worlds> {
  const w = { a: await buildOrgWorld(t, "a"), b: await buildOrgWorld(t, "b") };
  vi.advanceTimersByTime(1_000); // the 1 ms enrollment tokens are now expired
  return w;
}

function describe(call: Call, problem: string) {
  return `${call.fn.name} [${call.label}] ${problem} (seed ${SEED})`;
}

test(`every public function refuses ${REFUSAL_CALLS} malformed calls clearly and changes nothing`, async () => {
  vi.useFakeTimers();
  const t = newBackend();
  const w = await worlds(t);
  const rng = seededRng(SEED);
  const before = await fullSnapshot(t);
  const problems: string[] = [];
  const perFunction = new Map<string, number>();
  const codes = new Map<string, number>();
  let made = 0;
  while (made < REFUSAL_CALLS) {
    const fn = PUBLIC_FUNCTIONS[made % PUBLIC_FUNCTIONS.length];
    const call = malformedCall(fn, w, rng);
    if (call.expect === "either") continue; // odd-but-legal values may write; they run in the mixed sweep
    made++;
    perFunction.set(fn.name, (perFunction.get(fn.name) ?? 0) + 1);
    const outcome = await run(t, call);
    const code = outcome.kind === "refused" ? outcome.code : outcome.kind;
    codes.set(code, (codes.get(code) ?? 0) + 1);
    const problem = verdict(call.expect, call.label, outcome);
    if (problem) problems.push(describe(call, problem));
  }
  console.log(`refusal sweep (seed ${SEED}): ${[...codes].map(([c, n]) => `${c} ${n}`).join(", ")}`);
  expect(problems.slice(0, 20)).toEqual([]);
  expect(await fullSnapshot(t)).toEqual(before);
  expect([...perFunction.keys()].sort()).toEqual(PUBLIC_FUNCTIONS.map((f) => f.name).sort());
});

test(`${MIXED_CALLS} odd and malformed calls, then every timer: never a crash, tables stay consistent`, async () => {
  vi.useFakeTimers();
  const t = newBackend();
  const w = await worlds(t);
  const rng = seededRng(SEED + 1);
  const problems: string[] = [];
  let answered = 0;
  for (let i = 0; i < MIXED_CALLS; i++) {
    const fn = rng.pick(PUBLIC_FUNCTIONS);
    let call = malformedCall(fn, w, rng);
    // half the calls carry only odd-but-legal values, so the bodies run and write
    for (let tries = 0; i % 2 === 0 && call.expect !== "either" && tries < 20; tries++) call = malformedCall(fn, w, rng);
    const outcome = await run(t, call);
    if (outcome.kind === "answered") answered++;
    const problem = verdict(call.expect, call.label, outcome);
    if (problem) problems.push(describe(call, problem));
    if (i % 100 === 99) vi.advanceTimersByTime(rng.int(30_000)); // let backoffs and leases move on
  }
  console.log(`mixed sweep (seed ${SEED + 1}): ${answered} of ${MIXED_CALLS} calls answered, the rest refused`);
  expect(problems.slice(0, 20)).toEqual([]);
  expect(answered).toBeGreaterThan(0); // the mix did reach the function bodies, not only the validators
  // The check reads in several transactions: let the scheduled functions that already started finish first.
  await t.finishInProgressScheduledFunctions();
  expect(await checkConsistency(t)).toEqual([]);
  await t.finishAllScheduledFunctions(vi.runAllTimers);
  expect(await checkConsistency(t)).toEqual([]);
});
