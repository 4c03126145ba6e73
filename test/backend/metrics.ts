import type { FunctionReference } from "convex/server";
import type { Backend } from "./setup";

export type Usage = { documentsRead: number; documentsWritten: number; databaseQueries: number; bytesRead: number; bytesWritten: number };

/**
 * Run one query or mutation nested inside a t.run transaction and report what it used, from the
 * transaction-limit accounting that convex-test keeps (ctx.meta.getTransactionMetrics before and after).
 */
export async function measure<Ref extends FunctionReference<"query" | "mutation", "public" | "internal">>(
  t: Backend,
  kind: Ref["_type"],
  ref: Ref,
  args: Ref["_args"],
): Promise<{ usage: Usage; result: Ref["_returnType"] }> {
  return await t.run(async (ctx) => {
    const before = await ctx.meta.getTransactionMetrics();
    const result = (
      kind === "query"
        ? await ctx.runQuery(ref as unknown as FunctionReference<"query">, args)
        : await ctx.runMutation(ref as unknown as FunctionReference<"mutation">, args)
    ) as Ref["_returnType"];
    const after = await ctx.meta.getTransactionMetrics();
    const used = (k: keyof Usage) => after[k].used - before[k].used;
    return {
      usage: {
        documentsRead: used("documentsRead"),
        documentsWritten: used("documentsWritten"),
        databaseQueries: used("databaseQueries"),
        bytesRead: used("bytesRead"),
        bytesWritten: used("bytesWritten"),
      },
      result,
    };
  });
}
