import { convexToJson, jsonToConvex, type JSONValue, type Value } from "convex/values";

/**
 * Canonical JSON of a Convex value: Convex's own JSON encoding (object keys sorted, no insignificant whitespace),
 * which spells every value apart: NaN, ±Infinity and -0 as `$float` (never `null` or `0`), a bigint as `$integer`
 * (never a string), bytes as `$bytes` (base64 in a loop, whatever their size). User fields cannot start with `$`,
 * so these spellings never meet a user's object. Undefined object members are dropped, as JSON does.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(convexToJson(value as Value));
}

/** The value its canonical JSON spells (keys in sorted order): what every result of that spelling agreed on. */
export function canonicalValue(json: string): Value {
  return jsonToConvex(JSON.parse(json) as JSONValue);
}
