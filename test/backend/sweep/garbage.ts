import type { Rng } from "./prng";

/**
 * Malformed values by kind. A case says what the backend must do with it: "reject" (a clear refusal),
 * "notFound" (refusal or a null/empty answer, as for an id that does not exist) or "either" (the value is
 * odd but legal, e.g. an injection-like string used as plain text: it may be accepted as data).
 */
export type Expect = "reject" | "notFound" | "either";
export type Case = { value: unknown; expect: Expect; label: string };

export const INJECTION = [
  "'; drop table jobs; --",
  "../../etc/passwd",
  "..\\..\\windows\\system32",
  "<script>alert(1)</script>",
  '{"$gt":""}',
  "${process.exit(1)}",
  "%00%0d%0a",
  "\u0000nul",
  "null",
  "undefined",
  "__proto__",
  "constructor",
];
export const UNICODE = ["é", "日本語のジョブ", "😀🔥", "\u202eevil", "Ω≈ç√", "\u200b", "ｆｈ＿ｗ＿", "🏳️‍🌈".repeat(3)];
const WEIRD_NUMBERS = [NaN, Infinity, -Infinity, 2 ** 53, -(2 ** 53), 1e308, -1e308, Number.MIN_VALUE, 1.5, -1];

/** Values of the wrong type for a field whose validator wants `want`. */
export function wrongType(rng: Rng, want: "string" | "number" | "boolean" | "array"): Case {
  const all: Array<[string, unknown]> = [
    ["string", "text"],
    ["number", 42],
    ["boolean", true],
    ["null", null],
    ["array", ["a"]],
    ["object", { a: 1 }],
    ["bigint", 7n],
    ["bytes", new ArrayBuffer(4)],
    ["injection object", { $gt: "" }],
  ];
  const [label, value] = rng.pick(all.filter(([l]) => l !== want && !(want === "array" && l === "array")));
  return { value, expect: "reject", label: `wrong type: ${label}` };
}

export function hugeString(rng: Rng): string {
  return rng.pick(["x", "é", "😀", "'; drop table"]).repeat(rng.pick([10_000, 70_000, 300_000]));
}

/** A credential slot (apiKey, clientKey, token): nothing but the right live secret gets through. */
export function badSecret(rng: Rng, prefix: string, wrongKinds: string[]): Case {
  const body = () => Array.from({ length: 43 }, () => rng.pick([..."ABCxyz019_-"])).join("");
  const choices: Array<() => Case> = [
    () => ({ value: "", expect: "reject", label: "empty" }),
    () => ({ value: prefix, expect: "reject", label: "prefix only" }),
    () => ({ value: prefix + body(), expect: "reject", label: "unknown well-formed" }),
    () => ({ value: prefix + body() + "x", expect: "reject", label: "too long" }),
    () => ({ value: prefix.toUpperCase() + body(), expect: "reject", label: "wrong case" }),
    () => ({ value: ` ${prefix}${body()}`, expect: "reject", label: "leading space" }),
    () => ({ value: rng.pick(wrongKinds), expect: "reject", label: "another kind of key" }),
    () => ({ value: rng.pick(INJECTION), expect: "reject", label: "injection" }),
    () => ({ value: prefix + rng.pick(UNICODE).repeat(43).slice(0, 43), expect: "reject", label: "unicode body" }),
    () => ({ value: hugeString(rng), expect: "reject", label: "huge" }),
    () => wrongType(rng, "string"),
  ];
  return rng.pick(choices)();
}

/** Free text with a character cap; `cut` fields (error text) are truncated instead of refused. */
export function badText(rng: Rng, max: number, options: { allowEmpty?: boolean; cut?: boolean } = {}): Case {
  const over: Expect = options.cut ? "either" : "reject";
  const choices: Array<() => Case> = [
    () => ({ value: rng.pick(INJECTION), expect: "either", label: "injection text" }),
    () => ({ value: rng.pick(UNICODE), expect: "either", label: "unicode text" }),
    () => ({ value: "", expect: options.allowEmpty || options.cut ? "either" : "reject", label: "empty" }),
    () => ({ value: "   \t\n", expect: options.allowEmpty || options.cut ? "either" : "reject", label: "blank" }),
    () => ({ value: "a".repeat(max + 1), expect: over, label: "one over the cap" }),
    () => ({ value: "a".repeat(max), expect: "either", label: "at the cap" }),
    () => ({ value: hugeString(rng), expect: over, label: "huge" }),
    () => wrongType(rng, "string"),
  ];
  return rng.pick(choices)();
}

export function badCapabilities(rng: Rng, max: number): Case {
  const badName = () =>
    rng.pick(["", "GPU", "a b", "cpu!", "x".repeat(65), "*", ...INJECTION.slice(0, 6), ...UNICODE.slice(0, 4)]);
  const choices: Array<() => Case> = [
    () => ({ value: ["cpu", badName()], expect: "reject", label: "bad capability name" }),
    () => ({ value: Array.from({ length: max + 1 }, (_, i) => `c${i}`), expect: "reject", label: "too many" }),
    () => ({ value: ["cpu", 5], expect: "reject", label: "number in array" }),
    () => ({ value: [null], expect: "reject", label: "null in array" }),
    () => ({ value: ["cpu", "cpu", "gpu"], expect: "either", label: "duplicates" }),
    () => ({ value: [], expect: "either", label: "none" }),
    () => wrongType(rng, "array"),
  ];
  return rng.pick(choices)();
}

export function badInteger(rng: Rng, min: number, max: number): Case {
  const choices: Array<() => Case> = [
    () => {
      const value = rng.pick(WEIRD_NUMBERS);
      const legal = Number.isInteger(value) && value >= min && value <= max;
      return { value, expect: legal ? "either" : "reject", label: `number ${value}` };
    },
    () => ({ value: -0, expect: min <= 0 && max >= 0 ? "either" : "reject", label: "-0" }),
    () => ({ value: min - 1, expect: "reject", label: "one below" }),
    () => ({ value: max + 1, expect: "reject", label: "one above" }),
    () => ({ value: min + 0.5, expect: "reject", label: "fraction" }),
    () => wrongType(rng, "number"),
  ];
  return rng.pick(choices)();
}

/** A number that may have a fraction, from `min` to `max`: non-finite, out of range or not a number is refused. */
export function badNumber(rng: Rng, min: number, max: number): Case {
  const choices: Array<() => Case> = [
    () => ({ value: rng.pick([NaN, Infinity, -Infinity]), expect: "reject", label: "not finite" }),
    () => ({ value: min - 0.5, expect: "reject", label: "below" }),
    () => ({ value: max * 2, expect: "reject", label: "above" }),
    () => ({ value: rng.pick([min, min + 0.25, max]), expect: "either", label: "edge number" }),
    () => wrongType(rng, "number"),
  ];
  return rng.pick(choices)();
}

export function badFraction(rng: Rng): Case {
  const choices: Array<() => Case> = [
    () => ({ value: rng.pick([NaN, Infinity, -Infinity, 2 ** 53, 1.0000001, -1e-9, -1]), expect: "reject", label: "out of 0–1" }),
    () => ({ value: rng.pick([-0, 0, 1, 0.5]), expect: "either", label: "edge fraction" }),
    () => wrongType(rng, "number"),
  ];
  return rng.pick(choices)();
}

/** runAt: an epoch-ms time no more than a year ahead; the past means "now". */
export function badTime(rng: Rng): Case {
  const choices: Array<() => Case> = [
    () => ({ value: rng.pick([NaN, Infinity, -Infinity, 2 ** 53, 1e308]), expect: "reject", label: "not a time" }),
    () => ({ value: rng.pick([-0, -1, 0, -1e308]), expect: "either", label: "the past" }),
    () => wrongType(rng, "number"),
  ];
  return rng.pick(choices)();
}

function deep(levels: number): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

/** A job payload or result: any Convex value within the caps that Convex can store. */
export function badValue(rng: Rng, maxBytes: number): Case {
  const choices: Array<() => Case> = [
    () => ({ value: "p".repeat(maxBytes + 1), expect: "reject", label: "over the size cap" }),
    () => ({ value: Array.from({ length: 9_000 }, () => 1), expect: "reject", label: "array over 8192 items" }),
    () => ({ value: deep(70), expect: "reject", label: "nested 70 deep" }),
    () => ({ value: Object.fromEntries(Array.from({ length: 1_100 }, (_, i) => [`k${i}`, i])), expect: "reject", label: "object over 1024 fields" }),
    () => ({ value: { "": 1 }, expect: "reject", label: "empty field name" }),
    () => ({ value: { $gt: "" }, expect: "reject", label: "$ field name" }),
    () => ({ value: { "é": 1 }, expect: "reject", label: "non-ASCII field name" }),
    () => ({ value: [undefined], expect: "reject", label: "undefined in array" }),
    () => ({ value: { f: () => 1 }, expect: "reject", label: "function" }),
    () => ({ value: rng.pick(INJECTION), expect: "either", label: "injection string" }),
    () => ({ value: { q: rng.pick(INJECTION), u: rng.pick(UNICODE) }, expect: "either", label: "injection object" }),
    () => ({ value: rng.pick([NaN, Infinity, -0, 2 ** 53, 2n ** 62n, null, false]), expect: "either", label: "odd scalar" }),
    () => ({ value: deep(40), expect: "either", label: "nested 40 deep" }),
  ];
  return rng.pick(choices)();
}
