/**
 * What a Convex document can hold, checked up front. Function arguments may carry values that a document
 * cannot store (deep nesting, huge arrays, reserved field names); without this check such a payload would
 * fail deep inside db.insert with an uncoded system error instead of a clear invalid_argument.
 * Limits from docs.convex.dev "Data Types": arrays ≤ 8192 items, objects ≤ 1024 fields, field names
 * non-empty, printable ASCII, not starting with "$" or "_"; nesting is kept well inside the document limit.
 */
export const STORABLE = { maxDepth: 48, maxArrayItems: 8192, maxObjectFields: 1024, maxFieldNameChars: 1024 } as const;

/** A description of the first part of `value` a document could not store, or null when it is storable. */
export function storableProblem(value: unknown, path = "value", depth = 0): string | null {
  if (value === null || typeof value !== "object") return null;
  if (value instanceof ArrayBuffer) return null;
  if (depth >= STORABLE.maxDepth) return `${path} nests deeper than ${STORABLE.maxDepth} levels`;
  if (Array.isArray(value)) {
    if (value.length > STORABLE.maxArrayItems) return `${path} has ${value.length} items; the cap is ${STORABLE.maxArrayItems}`;
    for (let i = 0; i < value.length; i++) {
      const problem = storableProblem(value[i], `${path}[${i}]`, depth + 1);
      if (problem) return problem;
    }
    return null;
  }
  const entries = Object.entries(value);
  if (entries.length > STORABLE.maxObjectFields) {
    return `${path} has ${entries.length} fields; the cap is ${STORABLE.maxObjectFields}`;
  }
  for (const [name, field] of entries) {
    const nameProblem = fieldNameProblem(name);
    if (nameProblem) return `${path} has a field name that ${nameProblem}`;
    const problem = storableProblem(field, `${path}.${name}`, depth + 1);
    if (problem) return problem;
  }
  return null;
}

function fieldNameProblem(name: string): string | null {
  if (name.length === 0) return "is empty";
  if (name.length > STORABLE.maxFieldNameChars) return `is longer than ${STORABLE.maxFieldNameChars} characters`;
  if (name.startsWith("$") || name.startsWith("_")) return `starts with a reserved "${name[0]}" (${JSON.stringify(name.slice(0, 40))})`;
  if (!/^[\x20-\x7e]+$/.test(name)) return `has characters outside printable ASCII (${JSON.stringify(name.slice(0, 40))})`;
  return null;
}
