import { getDocumentSize, type Value } from "convex/values";

const MiB = 1024 * 1024;

/**
 * Byte budgets per transaction. Convex stops a transaction at 16 MiB read or 8 MiB written; Farmhand's
 * functions stay under half of each at every documented cap (the "at the caps" backend suite enforces
 * `readBytes`/`writeBytes` as its transaction limits). A range read takes at most `rangeReadBytes` of it, so
 * the function's other reads have room; it stops early and continues in its next page or run.
 */
export const TX_BUDGET = {
  readBytes: 8 * MiB,
  writeBytes: 4 * MiB,
  rangeReadBytes: 4 * MiB,
  /**
   * Documents a purge or retention transaction deletes (output chunks, events, bodies, checkpoints): each
   * is read by its range and again by its delete, and a job's last step (its bodies and checkpoint, up to
   * about 1.2 MiB) may pass it once.
   */
  purgeBytes: 1.5 * MiB,
} as const;

/** What a transaction has left to spend on one kind of bytes; every range read in it charges the same budget. */
export class ByteBudget {
  private spent = 0;

  constructor(readonly limit: number = TX_BUDGET.rangeReadBytes) {}

  /** Count a document read (or deleted) against the budget. */
  charge(doc: Record<string, Value>): void {
    this.spent += getDocumentSize(doc);
  }

  /** Count bytes read some other way (a body's text, a row's size known beforehand). */
  spend(bytes: number): void {
    this.spent += bytes;
  }

  get used(): number {
    return this.spent;
  }

  get exhausted(): boolean {
    return this.spent >= this.limit;
  }
}

/**
 * Up to `maxRows` documents of a query, read one at a time until the budget is spent: the document that
 * spends it is the last one taken (it has been read), so a call always makes progress. `cut`: it stopped
 * for the budget, not for the rows or the end of the range.
 */
export async function takeWithinBudget<T extends Record<string, Value>>(
  query: AsyncIterable<T>,
  maxRows: number,
  budget: ByteBudget,
): Promise<{ rows: T[]; cut: boolean }> {
  const rows: T[] = [];
  if (maxRows <= 0 || budget.exhausted) return { rows, cut: maxRows > 0 };
  for await (const doc of query) {
    rows.push(doc);
    budget.charge(doc);
    if (rows.length >= maxRows) return { rows, cut: false };
    if (budget.exhausted) return { rows, cut: true };
  }
  return { rows, cut: false };
}
