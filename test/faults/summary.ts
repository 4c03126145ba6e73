/** A two-column table for the console: one figure per line, labels left, values right-aligned. */
export function formatTable(title: string, rows: Array<[string, string | number]>): string {
  const labelWidth = Math.max(...rows.map(([label]) => label.length));
  const valueWidth = Math.max(...rows.map(([, value]) => String(value).length));
  const rule = "-".repeat(labelWidth + valueWidth + 3);
  const lines = rows.map(([label, value]) => `${label.padEnd(labelWidth)} | ${String(value).padStart(valueWidth)}`);
  return [title, rule, ...lines, rule].join("\n");
}
