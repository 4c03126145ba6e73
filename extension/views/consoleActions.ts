import * as vscode from "vscode";
import type { ConsoleSession } from "../donor/consoleSession";
import { alsoRevokesText, describeJobFilter, type ConsoleJobFilter, type ConsoleRequest, type ConsoleState, type SecretKind } from "../protocol/consoleProtocol";

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
      | "invalidateCache"
      | "setCacheUnvalidated"
      | "createToken"
      | "createClientKey"
      | "createOperatorKey"
      | "pauseSchedule"
      | "resumeSchedule"
      | "removeSchedule"
      | "setClientKeyLimits";
  }
>;

/** What the console does after an action: say something, follow a bulk operation, show a secret once, or nothing (declined). */
export type ConsoleActionOutcome = { notice: string } | { bulkId: string } | { secret: string; kind: SecretKind } | undefined;

/**
 * Performs one of the console's actions through the console's session (the server checks the right on each).
 * Everything that cannot be undone asks first with a modal question whose buttons say what they do; declined,
 * nothing is sent. `state` is what the console shows: the Jobs page's filter (what a bulk action acts on) and the
 * lists that name what a revoke removes.
 */
export async function performConsoleAction(session: ConsoleSession, request: ConsoleActionRequest, state: ConsoleState): Promise<ConsoleActionOutcome> {
  const filter = state.filter;
  switch (request.type) {
    case "setCacheUnvalidated": {
      const question = "Let results that one worker returned alone enter the result cache? Every identical job later submitted, by any client key, is then answered with that one donor's answer.";
      if (request.on && !(await confirm(question, "Trust One Worker's Results", "Keep Quorum Only"))) return undefined;
      await session.setCacheUnvalidated(request.on);
      return { notice: request.on ? "The result cache now takes results one worker returned alone." : "The result cache takes only results a quorum of workers agreed on." };
    }
    case "invalidateCache": {
      const question = `Drop the cached results of ${request.jobType} jobs? Identical jobs submitted later run again; jobs already answered keep their results.`;
      if (!(await confirm(question, "Drop Cached Results", "Keep Them"))) return undefined;
      const { dropped, more } = await session.invalidateCache(request.jobType);
      return { notice: `Dropped ${dropped}${more ? "+ (the rest follow in the background)" : ""} cached result${dropped === 1 && !more ? "" : "s"} of ${request.jobType}.` };
    }
    case "retryJob":
      await session.retryJob(request.jobId);
      return { notice: "Retried: the job is back in its queue." };
    case "cancelJob": {
      const outcome = await session.cancelJob(request.jobId);
      return { notice: outcome.status === "running" ? "Cancel requested: its worker stops it." : `The job is ${outcome.status}.` };
    }
    case "revokeWorker": {
      const name = state.workers?.find((w) => w.workerId === request.workerId)?.name ?? "this worker";
      const also = alsoRevokesText(await session.minted(request.workerId));
      const question = `Revoke the worker “${name}”? Its key stops working at once and its jobs go back to the queue.${also}`;
      if (!(await confirm(question, `Revoke ${name}`, "Keep It"))) return undefined;
      const { handedBack, alsoRevoked } = await session.revokeWorker(request.workerId);
      return { notice: `Worker “${name}” revoked; ${handedBack} job(s) went back to the queue${alsoRevoked > 0 ? `; what it created is revoked too` : ""}.` };
    }
    case "revokeEnrollment": {
      const prefix = state.access?.enrollments.find((e) => e.enrollmentId === request.enrollmentId)?.tokenPrefix;
      const which = prefix ? `the enrollment token ${prefix}…` : "this enrollment token";
      if (!(await confirm(`Revoke ${which}? Nobody can join with it any more.`, "Revoke Token", "Keep It"))) return undefined;
      await session.revokeEnrollment(request.enrollmentId);
      return { notice: "Enrollment token revoked." };
    }
    case "revokeClientKey": {
      const name = state.access?.clientKeys.find((k) => k.clientKeyId === request.clientKeyId)?.name ?? "this client key";
      if (!(await confirm(`Revoke the client key “${name}”? The apps using it can no longer submit or read jobs.`, `Revoke ${name}`, "Keep It"))) return undefined;
      await session.revokeClientKey(request.clientKeyId);
      return { notice: "Client key revoked." };
    }
    case "revokeOperatorKey": {
      const name = state.access?.operatorKeys.find((k) => k.operatorKeyId === request.operatorKeyId)?.name ?? "this operator key";
      const also = alsoRevokesText(await session.minted(request.operatorKeyId));
      if (!(await confirm(`Revoke the operator key “${name}”? Whoever uses it can no longer open the console.${also}`, `Revoke ${name}`, "Keep It"))) return undefined;
      const { alsoRevoked } = await session.revokeOperatorKey(request.operatorKeyId);
      return { notice: `Operator key revoked${alsoRevoked > 0 ? ", with what it created" : ""}.` };
    }
    case "bulk": {
      const statuses = request.action === "retry" ? ["dead"] : ["pending", "running"];
      const { count, more } = await session.countJobs(filter, statuses);
      const jobs = `${count}${more ? "+" : ""} ${request.action === "retry" ? "dead " : ""}job${count === 1 && !more ? "" : "s"}`;
      const keyName = state.access?.clientKeys.find((k) => k.clientKeyId === filter.clientKeyId)?.name;
      if (count === 0) return { notice: `No ${request.action === "retry" ? "dead" : "pending or running"} jobs ${describeJobFilter(filter, keyName)}: nothing to ${request.action}.` };
      const verb = request.action === "retry" ? "Retry" : "Cancel";
      if (!(await confirm(`${verb} ${jobs} ${describeJobFilter(filter, keyName)}?`, `${verb} ${jobs}`, "Keep Them"))) return undefined;
      return await session.bulk(request.action, filter);
    }
    case "purgeDead": {
      // The purge serves the type and time range of the filter in use (the Jobs page offers it only for those).
      const { type, from, to } = filter;
      const deadFilter: ConsoleJobFilter = { status: "dead", type, from, to };
      const { count, more } = await session.countJobs(deadFilter, ["dead"]);
      if (count === 0) return { notice: `No dead letters ${describeJobFilter(deadFilter)}: nothing to delete.` };
      const letters = `${count}${more ? "+" : ""} dead letter${count === 1 && !more ? "" : "s"}`;
      if (!(await confirm(`Delete ${letters} ${describeJobFilter(deadFilter)}, with their output and events?`, `Delete ${letters}`, "Keep Them"))) return undefined;
      return await session.purgeDead({ type, from, to });
    }
    case "createToken": {
      const { token } = await session.createEnrollment({
        capabilities: request.capabilities,
        maxConcurrentJobs: request.slots,
        ttlMs: request.ttlHours * 3_600_000,
        canManage: request.canManage,
        ...(request.donor !== undefined ? { donor: request.donor.trim() } : {}),
      });
      return { secret: token, kind: "enrollment" };
    }
    case "createClientKey": {
      const { key } = await session.createClientKey(request.name.trim(), request.canPublish);
      return { secret: key, kind: "client" };
    }
    case "createOperatorKey": {
      const { key } = await session.createOperatorKey(request.name.trim());
      return { secret: key, kind: "operator" };
    }
    case "pauseSchedule":
      await session.pauseSchedule(request.scheduleId);
      return undefined;
    case "resumeSchedule":
      await session.resumeSchedule(request.scheduleId);
      return undefined;
    case "removeSchedule": {
      const name = state.schedules?.schedules.find((s) => s.scheduleId === request.scheduleId)?.name ?? "this schedule";
      if (!(await confirm(`Remove the schedule “${name}”? It submits no more jobs; the jobs it submitted stay.`, `Remove ${name}`, "Keep It"))) return undefined;
      await session.removeSchedule(request.scheduleId);
      return { notice: `Schedule “${name}” removed.` };
    }
    case "setClientKeyLimits": {
      const { clientKeyId, weight, maxRunning, fairnessWeights } = request;
      const saved = await session.setClientKeyLimits({ clientKeyId, weight, maxRunning, fairnessWeights });
      return { notice: `Client key “${saved.name}”: weight ${saved.weight}, ${limitText(saved.maxRunning)}, ${saved.fairnessWeights} fairness weight${saved.fairnessWeights === 1 ? "" : "s"}.` };
    }
  }
}

function limitText(maxRunning: number | null): string {
  return maxRunning === null ? "no limit on running jobs" : `at most ${maxRunning} running`;
}

/** A modal question whose buttons say what they do; `no` is the dialog's close button (Escape answers it too). */
async function confirm(question: string, yes: string, no: string): Promise<boolean> {
  const choice = await vscode.window.showWarningMessage(question, { modal: true }, { title: yes }, { title: no, isCloseAffordance: true });
  return choice?.title === yes;
}
