import * as vscode from "vscode";
import { api } from "../../convex/_generated/api";
import type { FarmConnection } from "../donor/farmConnection";
import { describeJobFilter, type ConsoleJobFilter, type ConsoleRequest } from "../hostAndWebview/consoleProtocol";

/** The console's requests that change the farm (each one already validated). */
export type ConsoleActionRequest = Extract<
  ConsoleRequest,
  { type: "retryJob" | "cancelJob" | "revokeWorker" | "revokeEnrollment" | "revokeClientKey" | "bulk" | "purgeDead" | "createToken" }
>;

/** What the console does after an action: say something, follow a bulk operation, show a token once, or nothing (declined). */
export type ConsoleActionOutcome = { notice: string } | { bulkId: string } | { token: string } | undefined;

/**
 * Performs one of the console's actions through the farm connection (the server checks the key's canManage right
 * on each). Everything that cannot be undone asks first with a modal question; declined, nothing is sent.
 * `filter` is the Jobs page's filter in use, what a bulk retry or cancel acts on.
 */
export async function performConsoleAction(
  connection: FarmConnection,
  request: ConsoleActionRequest,
  filter: ConsoleJobFilter,
): Promise<ConsoleActionOutcome> {
  switch (request.type) {
    case "retryJob":
      await connection.run(api.consoleActions.retryJob, { jobId: request.jobId });
      return { notice: "Retried: the job is back in its queue." };
    case "cancelJob": {
      const outcome = await connection.run(api.consoleActions.cancelJob, { jobId: request.jobId });
      return { notice: outcome.status === "running" ? "Cancel requested: its worker stops it." : `The job is ${outcome.status}.` };
    }
    case "revokeWorker": {
      if (!(await confirm("Revoke this worker? Its key stops working at once and its jobs go back to the queue.", "Revoke"))) return undefined;
      const { handedBack } = await connection.run(api.consoleAccess.revokeWorker, { workerId: request.workerId });
      return { notice: `Worker revoked; ${handedBack} job(s) went back to the queue.` };
    }
    case "revokeEnrollment":
      if (!(await confirm("Revoke this enrollment token? Nobody can join with it any more.", "Revoke"))) return undefined;
      await connection.run(api.consoleAccess.revokeEnrollment, { enrollmentId: request.enrollmentId });
      return { notice: "Enrollment token revoked." };
    case "revokeClientKey":
      if (!(await confirm("Revoke this client key? The apps using it can no longer submit or read jobs.", "Revoke"))) return undefined;
      await connection.run(api.consoleAccess.revokeClientKey, { clientKeyId: request.clientKeyId });
      return { notice: "Client key revoked." };
    case "bulk": {
      const which = request.action === "retry" ? "Retry every dead job" : "Cancel every pending or running job";
      if (!(await confirm(`${which} ${describeJobFilter(filter)}?`, "Go Ahead"))) return undefined;
      return await connection.run(api.consoleActions.bulk, { action: request.action, filter });
    }
    case "purgeDead": {
      // The purge serves the type and time range of the filter in use (the Jobs page offers it only for those).
      const { type, from, to } = filter;
      const what = describeJobFilter({ status: "dead", type, from, to });
      if (!(await confirm(`Delete every dead letter ${what}, with its output and events?`, "Delete"))) return undefined;
      return await connection.run(api.consoleActions.purgeDead, { type, from, to });
    }
    case "createToken":
      return await connection.run(api.consoleAccess.createEnrollment, {
        capabilities: request.capabilities,
        maxConcurrentJobs: request.slots,
        ttlMs: request.ttlHours * 3_600_000,
        canManage: request.canManage,
      });
  }
}

async function confirm(question: string, yes: string): Promise<boolean> {
  return (await vscode.window.showWarningMessage(question, { modal: true }, yes)) === yes;
}
