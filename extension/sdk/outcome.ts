/** How a job that did not succeed is reported to a submitter (farmhand/client and the farmhand CLI). */

const FINAL: ReadonlySet<string> = new Set(["succeeded", "canceled", "dead"]);

export function isFinal(status: string): boolean {
  return FINAL.has(status);
}

/**
 * A job ended dead or canceled (or is unknown): `code` is the job's errorCode when it has one (dependency_failed,
 * inputs_too_large), else "dead" or "canceled".
 */
export class JobFailedError extends Error {
  readonly jobId: string;
  readonly status: string;
  readonly code: string;
  constructor(fields: { jobId: string; status: string; code: string; message: string }) {
    super(fields.message);
    this.name = "JobFailedError";
    this.jobId = fields.jobId;
    this.status = fields.status;
    this.code = fields.code;
  }
}

export function failureOf(job: { jobId: string; status: string; error?: string; errorCode?: string }): JobFailedError {
  return new JobFailedError({ jobId: job.jobId, status: job.status, code: job.errorCode ?? job.status, message: job.error ?? `job ${job.status}` });
}
