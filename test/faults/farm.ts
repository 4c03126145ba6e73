import { ConvexClient } from "convex/browser";
import { api } from "../../convex/_generated/api";
import type { Doc, Id } from "../../convex/_generated/dataModel";
import { readAll } from "../backend/sweep/consistency";
import type { Backend } from "../backend/setup";
import type { TestServer } from "../server";
import type { JobSpec, PlannedJob } from "./jobMix";

export type JobRow = Doc<"jobs">;
export type EventRow = Doc<"jobEvents">;

const FINAL = new Set(["succeeded", "canceled", "dead"]);

export function isFinal(row: Pick<JobRow, "status">): boolean {
  return FINAL.has(row.status);
}

/** The server's convex-test instance, typed with this project's schema (for the shared table readers). */
export function backendOf(server: TestServer): Backend {
  return server.t;
}

/**
 * Every job row, read straight from the data (the test process only; no function call on the server), with its
 * payload and result put back from the bodies kept beside it (convex/core/bodies.ts), so the audit reads them whole.
 */
export async function readJobs(server: TestServer): Promise<JobRow[]> {
  const rows = await readAll(backendOf(server), "jobs");
  const bodies = await readAll(backendOf(server), "jobBodies");
  const parts = new Map<string, unknown>(bodies.map((b) => [`${b.jobId}:${b.part}`, b.value as unknown]));
  return rows.map((row): JobRow => {
    const payload: unknown = row.payloadBytes === undefined ? row.payload : parts.get(`${row._id}:payload`);
    const result: unknown = row.resultBytes === undefined ? row.result : parts.get(`${row._id}:result`);
    return { ...row, payload, result };
  });
}

/** The org's pending and running jobs, through the status index (cheap enough to poll during the run). */
export async function readUnfinished(server: TestServer, orgId: string): Promise<JobRow[]> {
  return backendOf(server).run(async (ctx) => {
    const rows: JobRow[] = [];
    for (const status of ["pending", "running"] as const) {
      const q = ctx.db.query("jobs").withIndex("by_org_status", (q) => q.eq("orgId", orgId as Id<"orgs">).eq("status", status));
      rows.push(...(await q.collect()));
    }
    return rows;
  });
}

export async function readEvents(server: TestServer): Promise<EventRow[]> {
  return readAll(backendOf(server), "jobEvents");
}

/** The app that submits and cancels, over a real ConvexClient like any submitter. */
export class Submitter {
  readonly client: ConvexClient;
  /** jobId → the planned job it was submitted for. */
  readonly submitted = new Map<string, PlannedJob>();

  constructor(
    url: string,
    private readonly clientKey: string,
  ) {
    this.client = new ConvexClient(url, { logger: false, skipConvexDeploymentUrlCheck: true, unsavedChangesWarning: false });
  }

  async submit(jobs: PlannedJob[]): Promise<void> {
    for (let i = 0; i < jobs.length; i += 200) {
      const chunk = jobs.slice(i, i + 200);
      const specs: JobSpec[] = chunk.map((j) => j.spec);
      const ids = await this.client.mutation(api.jobs.submitBatch, { clientKey: this.clientKey, jobs: specs });
      if (ids.length !== chunk.length) throw new Error(`submitBatch answered ${ids.length} ids for ${chunk.length} jobs`);
      ids.forEach((id, k) => this.submitted.set(id, chunk[k]));
    }
  }

  /** Cancel a job; true when the server will end it canceled (at once, or as the running job's next write). */
  async cancel(jobId: string): Promise<boolean> {
    const answer = await this.client.mutation(api.jobs.cancel, { clientKey: this.clientKey, jobId });
    return answer.status === "canceled" || answer.cancelRequested === true;
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
