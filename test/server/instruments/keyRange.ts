// Ranges of index keys: what an index read asked for (from the query's range expressions) and what it
// actually covered (from its start to the last document returned, or to the range's end).
import { jsonToConvex, type JSONValue } from "convex/values";
import { comparePrefix, type IndexKey, type KeyValue } from "./valueOrder";

/** Keys starting with `key` are on the bound; `inclusive` says whether they are inside the range. */
export type Bound = { key: IndexKey; inclusive: boolean };
/** A missing bound is open: the range runs to that end of the index. */
export type KeyRange = { lower?: Bound; upper?: Bound };
export type Order = "asc" | "desc";

/** One index range expression of a query, as it travels in the `1.0/queryStream` syscall. */
export type RangeExpression = { type: "Eq" | "Gt" | "Gte" | "Lt" | "Lte"; fieldPath: string; value: JSONValue };

/** Range values travel as Convex JSON, with `{ $undefined: null }` standing for a missing field. */
function decodeKeyValue(value: JSONValue): KeyValue {
  if (typeof value === "object" && value !== null && !Array.isArray(value) && "$undefined" in value) return undefined;
  return jsonToConvex(value);
}

/** `eq` on a prefix of the index fields, then at most one lower and one upper bound on the next field. */
export function rangeFromExpressions(expressions: readonly RangeExpression[]): KeyRange {
  const equal: KeyValue[] = [];
  let lower: { value: KeyValue; inclusive: boolean } | undefined;
  let upper: { value: KeyValue; inclusive: boolean } | undefined;
  for (const expression of expressions) {
    const value = decodeKeyValue(expression.value);
    switch (expression.type) {
      case "Eq":
        equal.push(value);
        break;
      case "Gt":
      case "Gte":
        lower = { value, inclusive: expression.type === "Gte" };
        break;
      case "Lt":
      case "Lte":
        upper = { value, inclusive: expression.type === "Lte" };
        break;
      default:
        throw new Error(`Unknown index range expression ${JSON.stringify(expression)}`);
    }
  }
  const range: KeyRange = {};
  if (lower) range.lower = { key: [...equal, lower.value], inclusive: lower.inclusive };
  else if (equal.length > 0) range.lower = { key: equal, inclusive: true };
  if (upper) range.upper = { key: [...equal, upper.value], inclusive: upper.inclusive };
  else if (equal.length > 0) range.upper = { key: equal, inclusive: true };
  return range;
}

export function containsKey(range: KeyRange, key: IndexKey): boolean {
  if (range.lower) {
    const order = comparePrefix(key, range.lower.key);
    if (order < 0 || (order === 0 && !range.lower.inclusive)) return false;
  }
  if (range.upper) {
    const order = comparePrefix(key, range.upper.key);
    if (order > 0 || (order === 0 && !range.upper.inclusive)) return false;
  }
  return true;
}

/** The part of `range` a read in `order` went through up to and including the document with key `last`. */
export function rangeThrough(range: KeyRange, last: IndexKey, order: Order): KeyRange {
  return order === "asc" ? { lower: range.lower, upper: { key: last, inclusive: true } } : { lower: { key: last, inclusive: true }, upper: range.upper };
}

/** The part of `range` a read in `order` goes through after the document with key `cursor` (a page's start). */
export function rangeAfter(range: KeyRange, cursor: IndexKey, order: Order): KeyRange {
  return order === "asc" ? { lower: { key: cursor, inclusive: false }, upper: range.upper } : { lower: range.lower, upper: { key: cursor, inclusive: false } };
}
