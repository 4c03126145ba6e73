import type { Case, Expect } from "./garbage";
import type { Rng } from "./prng";
import type { PublicFunction, Worlds } from "./catalogue";

export type Call = { fn: PublicFunction; args: Record<string, unknown>; expect: Expect; label: string };

const RANK: Record<Expect, number> = { either: 0, notFound: 1, reject: 2 };

function stricter(a: Expect, b: Expect): Expect {
  return RANK[a] >= RANK[b] ? a : b;
}

/**
 * One malformed call: a valid call with one or two fields replaced by garbage, a required field dropped,
 * an unknown field added, or a null where a value was optional.
 */
export function malformedCall(fn: PublicFunction, w: Worlds, rng: Rng): Call {
  const args = fn.valid(w, rng);
  const names = Object.keys(fn.fields);
  const roll = rng.next();
  if (roll < 0.08) {
    const required = names.filter((n) => !fn.fields[n].optional);
    const name = rng.pick(required);
    delete args[name];
    return { fn, args, expect: "reject", label: `missing ${name}` };
  }
  if (roll < 0.16) {
    const extra = rng.pick(["extra", "orgId", "workerId", "_id", "isAdmin", "canManage", "clientKey", "apiKey"]);
    if (extra in fn.fields) return malformedCall(fn, w, rng);
    args[extra] = rng.pick([true, "x", 1, { $gt: "" }]);
    return { fn, args, expect: "reject", label: `extra field ${extra}` };
  }
  if (roll < 0.22) {
    const optional = names.filter((n) => fn.fields[n].optional && !fn.fields[n].nullable);
    if (optional.length > 0) {
      const name = rng.pick(optional);
      args[name] = null;
      return { fn, args, expect: "reject", label: `${name}: null` };
    }
  }
  const count = roll < 0.4 && names.length > 1 ? 2 : 1;
  let expect: Expect = "either";
  const labels: string[] = [];
  for (const name of pickDistinct(rng, names, count)) {
    const bad: Case = fn.fields[name].garbage(rng, w);
    args[name] = bad.value;
    expect = stricter(expect, bad.expect);
    labels.push(`${name}: ${bad.label}`);
  }
  return { fn, args, expect, label: labels.join(" + ") };
}

function pickDistinct(rng: Rng, items: string[], count: number): string[] {
  const pool = [...items];
  const out: string[] = [];
  while (out.length < count && pool.length > 0) out.push(pool.splice(rng.int(pool.length), 1)[0]);
  return out;
}
