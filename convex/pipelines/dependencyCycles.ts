import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { ByteBudget } from "../core/budget";
import { fail } from "../core/errors";

/**
 * No cycles through open batches. Listed parents must exist, so a job can only wait on older jobs; but a batch takes
 * new jobs while children wait on it, so a submit that joins batch B could close a loop: one of its parents waits,
 * directly or through other waiting jobs and batches, on B, and B would then wait on the new job. Such a submit is
 * refused (code dependency_cycle, naming the batch and the parent).
 *
 * The search follows only waits that can go on: an edge row (table jobDependencies) of a waiting job whose target is
 * a batch or a job that was itself waiting when the edge was made (`via`; a pending or running job waits on nothing,
 * and nothing goes back to waiting). A batch is followed through the distinct `via` values of its waiting members'
 * edges (index by_child_batch_via), one index read each, however many members share them.
 */

/** The `via` of an edge: the node it leads on to, or undefined when it ends there (a job that was not waiting). */
export function edgeVia(target: { batchId: string } | { jobId: Id<"jobs">; waiting: boolean }): string | undefined {
  if ("batchId" in target) return `b:${target.batchId}`;
  return target.waiting ? `j:${target.jobId}` : undefined;
}

/** Nodes (waiting jobs and batches) one check may visit; past it the submit is refused as too_large. */
const NODES_MAX = 500;
const BYTES_MAX = 1024 * 1024;

type Node = { kind: "b"; batchId: string } | { kind: "j"; jobId: Id<"jobs"> };

function nodeOf(via: string): Node {
  return via.startsWith("b:") ? { kind: "b", batchId: via.slice(2) } : { kind: "j", jobId: via.slice(2) as Id<"jobs"> };
}

/**
 * Refuse a job that joins `batchId` when a parent of it (its waiting listed parents, and its batch parent) reaches
 * that batch. Reads nothing more when no job waits on the batch.
 */
export async function refuseCycle(
  ctx: QueryCtx,
  orgId: Id<"orgs">,
  batchId: string,
  start: { waitingJobs: Id<"jobs">[]; batch?: string },
): Promise<void> {
  const waitedOn = await ctx.db
    .query("jobDependencies")
    .withIndex("by_org_batch", (q) => q.eq("orgId", orgId).eq("batchId", batchId))
    .first();
  if (!waitedOn) return;
  const bytes = new ByteBudget(BYTES_MAX);
  const seen = new Set<string>();
  // each node remembers the parent of the new job it was reached from, to name it
  const queue: Array<{ node: Node; from: string }> = [];
  const push = (via: string, from: string) => {
    if (seen.has(via)) return;
    seen.add(via);
    if (seen.size > NODES_MAX) {
      fail("too_large", `dependsOn: could not check that joining batch ${JSON.stringify(batchId)} closes no cycle: more than ${NODES_MAX} waiting jobs and batches behind its parents`);
    }
    queue.push({ node: nodeOf(via), from });
  };
  for (const jobId of start.waitingJobs) push(`j:${jobId}`, `parent job ${jobId}`);
  if (start.batch !== undefined) push(`b:${start.batch}`, `parent batch ${JSON.stringify(start.batch)}`);
  while (queue.length > 0) {
    const { node, from } = queue.shift()!;
    if (node.kind === "b" && node.batchId === batchId) {
      fail("dependency_cycle", `Joining batch ${JSON.stringify(batchId)} would close a cycle: its ${from} waits on batch ${JSON.stringify(batchId)}`);
    }
    for (const via of await nextHops(ctx, orgId, node, bytes)) push(via, from);
    if (bytes.exhausted) fail("too_large", `dependsOn: could not check that joining batch ${JSON.stringify(batchId)} closes no cycle: too many waiting jobs behind its parents`);
  }
}

/** Where a waiting job or a batch leads on to. */
async function nextHops(ctx: QueryCtx, orgId: Id<"orgs">, node: Node, bytes: ByteBudget): Promise<string[]> {
  if (node.kind === "j") {
    const job = await ctx.db.get(node.jobId);
    if (!job || job.status !== "waiting") return [];
    bytes.charge(job);
    const edges = await ctx.db
      .query("jobDependencies")
      .withIndex("by_child", (q) => q.eq("childId", node.jobId))
      .take(101);
    edges.forEach((edge) => bytes.charge(edge));
    return edges.flatMap((edge) => (edge.via === undefined ? [] : [edge.via]));
  }
  const hops: string[] = [];
  let last: string | undefined;
  for (;;) {
    const after = last;
    const edge: Doc<"jobDependencies"> | null = await ctx.db
      .query("jobDependencies")
      .withIndex("by_child_batch_via", (q) => {
        const range = q.eq("orgId", orgId).eq("childBatch", node.batchId);
        return after === undefined ? range.gt("via", "") : range.gt("via", after);
      })
      .first();
    if (!edge || edge.via === undefined) return hops;
    bytes.charge(edge);
    hops.push(edge.via);
    last = edge.via;
    if (hops.length > NODES_MAX) return hops;
  }
}
