// What a committed transaction changed: one record per document it wrote, with the document's version
// before and after (only the fields indexes see), so a read range can tell whether the write fell into it.
import type { Projection } from "./indexCatalog";

/** A version the instruments could not learn (see the README): treated as falling into every range of its table. */
export const unknownVersion = Symbol("unknown version");
/** null: the document did not exist (before an insert, after a delete). */
export type Version = Projection | null | typeof unknownVersion;
export type WriteRecord = { table: string; id: string; before: Version; after: Version };

/** System tables (`_scheduled_functions`, `_storage`) change inside convex-test without syscalls. */
export function isSystemTable(table: string): boolean {
  return table.startsWith("_");
}

/** convex-test's ids are a decimal counter followed by the table name. */
export function tableOfId(id: string): string | undefined {
  const digits = /^[0-9]+/.exec(id);
  return digits && digits[0].length < id.length ? id.slice(digits[0].length) : undefined;
}
