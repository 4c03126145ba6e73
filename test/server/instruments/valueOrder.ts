// Convex's order on values, extended to index keys: a key is the tuple of a document's index fields followed
// by _creationTime and _id, and index ranges compare a key's first fields with a shorter prefix.
// Single values are compared by convex/values' own compareValues, the function convex-test evaluates index
// ranges with, so a range here holds exactly the documents convex-test returned for it.
import { compareValues, type Value } from "convex/values";

/** A field of an index key; a document without the field has `undefined` there, which sorts first. */
export type KeyValue = Value | undefined;
export type IndexKey = readonly KeyValue[];

export { compareValues };

/**
 * Compares `key`'s first `prefix.length` fields with `prefix`: 0 when the key starts with the prefix. A key
 * shorter than the prefix sorts before it.
 */
export function comparePrefix(key: IndexKey, prefix: IndexKey): number {
  for (let i = 0; i < prefix.length; i++) {
    if (i >= key.length) return -1;
    const order = compareValues(key[i], prefix[i]);
    if (order !== 0) return order;
  }
  return 0;
}

/** Orders whole keys field by field; a key that is a prefix of another sorts first. */
export function compareKeys(a: IndexKey, b: IndexKey): number {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const order = compareValues(a[i], b[i]);
    if (order !== 0) return order;
  }
  return a.length - b.length;
}
