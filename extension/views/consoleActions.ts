import * as vscode from "vscode";
import type { FunctionReturnType } from "convex/server";
import { api } from "../../convex/_generated/api";
import { describeJobFilter, type ConsoleJobFilter, type ConsoleRequest, type ConsoleState, type SecretKind } from "../protocol/consoleProtocol";
import type { ConsoleConnection } from "./consoleConnection";

/** The console's requests that change the farm (each one already validated). */
export type ConsoleActionRequest = Extract<
  ConsoleRequest,
  {
    type:
      | "retryJob"
      | "cancelJob"
      | "revokeWorker"
      | "revokeEnrollment"
      | "revokeClientKey"
      | "revokeOperatorKey"
      | "bulk"
      | "purgeDead"
      | "createToken"
      | "createClientKey"
      | "createOperatorKey";
  }
>;

/** What the console does after an action: say something, follow a bulk operation, show a secret once, or nothing (declined). */
export type ConsoleActionOutcome = { notice: string } | { bulkId: string } | { secret: string; kind: SecretKind } | undefined;

/** Jobs counted for a bulk question, at most (pages of 100, 50 pages): "Cancel 1000+ jobs" past that. */
const COUNT_AT_MOST = 1_000;
const COUNT_PAGE = 100;
const COUNT_PAGES = 50;

/**
 * Performs one of the console's actions with the console's credential (the server checks its right on each).
 * Everything that cannot be undone asks first with a modal question whose buttons say what they do; declined,
 * nothing is sent. `state` is what the console shows: the Jobs page's filter (what a bulk action acts on) and the
 * lists that name what a revoke removes.
 */
export async function performConsoleAction(connection: ConsoleConnection, request: ConsoleActionRequest, state: ConsoleState): Promise<ConsoleActionOutcome> {
  const filter = state.filter;
  switch (request.type) {
    case "retryJob":
      await connection.run(api.consoleActions.retryJob, { jobId: request.jobId });
      return { notice: "Retried: the job is back in its queue." };
    case "cancelJob": {
      const outcome = await connection.run(api.consoleActions.cancelJob, { jobId: request.jobId });
      return { notice: outcome.status === "running" ? "Cancel requested: its worker stops it." : `The job is ${outcome.status}.` };
    }
    case "revokeWorker": {
      const name = state.workers?.find((w) => w.workerId === request.workerId)?.name ?? "this worker";
      const question = `Revoke the worker “${name}”? Its key stops working at once and its jobs go back to the queue.`;
      if (!(await confirm(question, `Revoke ${name}`, "Keep It"))) return undefined;
      const { handedBack } = await connection.run(api.consoleAccess.revokeWorker, { workerId: request.workerId });
      return { notice: `Worker “${name}” revoked; ${handedBack} job(s) went back to the queue.` };
    }
    case "revokeEnrollment": {
      const prefix = state.access?.enrollments.find((e) => e.enrollmentId === request.enrollmentId)?.tokenPrefix;
      const which = prefix ? `the enrollment token ${prefix}…` : "this enrollment token";
      if (!(await confirm(`Revoke ${which}? Nobody can join with it any more.`, "Revoke Token", "Keep It"))) return undefined;
      await connection.run(api.consoleAccess.revokeEnrollment, { enrollmentId: request.enrollmentId });
      return { notice: "Enrollment token revoked." };
    }
    case "revokeClientKey": {
      const name = state.access?.clientKeys.find((k) => k.clientKeyId === request.clientKeyId)?.name ?? "this client key";
      if (!(await confirm(`Revoke the client key “${name}”? The apps using it can no longer submit or read jobs.`, `Revoke ${name}`, "Keep It"))) return undefined;
      await connection.run(api.consoleAccess.revokeClientKey, { clientKeyId: request.clientKeyId });
      return { notice: "Client key revoked." };
    }
    case "revokeOperatorKey": {
      const name = state.access?.operatorKeys.find((k) => k.operatorKeyId === request.operatorKeyId)?.name ?? "this operator key";
      if (!(await confirm(`Revoke the operator key “${name}”? Whoever uses it can no longer open the console.`, `Revoke ${name}`, "Keep It"))) return undefined;
      await connection.run(api.consoleAccess.revokeOperatorKey, { operatorKeyId: request.operatorKeyId });
      return { notice: "Operator key revoked." };
    }
    case "bulk": {
      const statuses = request.action === "retry" ? ["dead"] : ["pending", "running"];
      const { count, more } = await countJobs(connection, filter, statuses);
      const jobs = `${count}${more ? "+" : ""} ${request.action === "retry" ? "dead " : ""}job${count === 1 && !more ? "" : "s"}`;
      if (count === 0) return { notice: `No ${request.action === "retry" ? "dead" : "pending or running"} jobs ${describeJobFilter(filter)}: nothing to ${request.action}.` };
      const verb = request.action === "retry" ? "Retry" : "Cancel";
      if (!(await confirm(`${verb} ${jobs} ${describeJobFilter(filter)}?`, `${verb} ${jobs}`, "Keep Them"))) return undefined;
      return await connection.run(api.consoleActions.bulk, { action: request.action, filter });
    }
    case "purgeDead": {
      // The purge serves the type and time range of the filter in use (the Jobs page offers it only for those).
      const { type, from, to } = filter;
      const deadFilter: ConsoleJobFilter = { status: "dead", type, from, to };
      const { count, more } = await countJobs(connection, deadFilter, ["dead"]);
      if (count === 0) return { notice: `No dead letters ${describeJobFilter(deadFilter)}: nothing to delete.` };
      const letters = `${count}${more ? "+" : ""} dead letter${count === 1 && !more ? "" : "s"}`;
      if (!(await confirm(`Delete ${letters} ${describeJobFilter(deadFilter)}, with their output and events?`, `Delete ${letters}`, "Keep Them"))) return undefined;
      return await connection.run(api.consoleActions.purgeDead, { type, from, to });
    }
    case "createToken": {
      const { token } = await connection.run(api.consoleAccess.createEnrollment, {
        capabilities: request.capabilities,
        maxConcurrentJobs: request.slots,
        ttlMs: request.ttlHours * 3_600_000,
        canManage: request.canManage,
      });
      return { secret: token, kind: "enrollment" };
    }
    case "createClientKey": {
      const { key } = await connection.run(api.consoleAccess.createClientKey, { name: request.name.trim(), canPublish: request.canPublish });
      return { secret: key, kind: "client" };
    }
    case "createOperatorKey": {
      const { key } = await connection.run(api.consoleAccess.createOperatorKey, { name: request.name.trim() });
      return { secret: key, kind: "operator" };
    }
  }
}

/** How many jobs of the filter have one of `statuses`, counted up to COUNT_AT_MOST (`more`: there are more). */
async function countJobs(connection: ConsoleConnection, filter: ConsoleJobFilter, statuses: string[]): Promise<{ count: number; more: boolean }> {
  let count = 0;
  let cursor: string | null = null;
  for (let pages = 1; ; pages++) {
    const page: FunctionReturnType<typeof api.console.jobs> = await connection.query(api.console.jobs, { filter, paginationOpts: { numItems: COUNT_PAGE, cursor } });
    count += page.page.filter((j) => statuses.includes(j.status)).length;
    if (page.isDone) return { count, more: false };
    if (count >= COUNT_AT_MOST || pages >= COUNT_PAGES) return { count, more: true };
    cursor = page.continueCursor;
  }
}

/** A modal question whose buttons say what they do; `no` is the dialog's close button (Escape answers it too). */
async function confirm(question: string, yes: string, no: string): Promise<boolean> {
  const choice = await vscode.window.showWarningMessage(question, { modal: true }, { title: yes }, { title: no, isCloseAffordance: true });
  return choice?.title === yes;
}
