// Turns one database syscall of a running execution into read-set and write-set entries. Only answered
// syscalls get here: an operation that threw changed nothing.
import type { Execution } from "./executions";
import type { SyscallQuery } from "./readSet";
import { isSystemTable, tableOfId, type Version } from "./writes";

/** The arguments of the syscalls below (each uses some of these). */
type Args = { table?: string; id?: string; queryId?: number; query: SyscallQuery; cursor?: unknown; endCursor?: unknown };

export function recordOperation(
  execution: Execution,
  op: string,
  argsJson: string,
  resultJson: string,
  committedVersion: (id: string) => Version,
): void {
  const tx = execution.tx;
  if (!tx || !execution.running) return;
  switch (op) {
    case "1.0/queryStream":
      tx.reads.startStream((JSON.parse(resultJson) as { queryId: number }).queryId, (JSON.parse(argsJson) as Args).query);
      return;
    case "1.0/queryStreamNext":
      tx.reads.streamNext((JSON.parse(argsJson) as Args).queryId!, resultJson);
      return;
    case "1.0/queryPage":
      tx.reads.page(JSON.parse(argsJson) as Args, JSON.parse(resultJson) as { continueCursor?: unknown });
      return;
    case "1.0/get": {
      const { id, table } = JSON.parse(argsJson) as Args;
      if (typeof id === "string") tx.reads.point(id, table ?? tableOfId(id));
      return;
    }
    case "1.0/count":
      tx.reads.wholeTable((JSON.parse(argsJson) as Args).table!);
      return;
    case "1.0/insert": {
      const id = (JSON.parse(resultJson) as { _id: string })._id;
      const table = tableOfId(id);
      if (table !== undefined && !isSystemTable(table)) execution.writes.set(id, { table, before: null });
      return;
    }
    case "1.0/shallowMerge":
    case "1.0/replace":
    case "1.0/remove": {
      const args = JSON.parse(argsJson) as Args;
      const id = args.id!;
      const table = args.table ?? tableOfId(id);
      if (table === undefined || isSystemTable(table) || execution.writes.has(id)) return;
      execution.writes.set(id, execution.earlierWrite(id) ?? { table, before: committedVersion(id) });
      return;
    }
  }
}
