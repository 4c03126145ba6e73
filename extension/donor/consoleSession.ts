import type * as vscode from "vscode";
import { ConvexHttpClient } from "convex/browser";
import type { FunctionArgs, FunctionReference, FunctionReturnType } from "convex/server";
import { api } from "../../convex/_generated/api";
import type { ConsoleJobFilter } from "../protocol/consoleProtocol";
import type { ConsoleConnection, ConsoleCredential } from "./consoleConnection";

type Watcher<Q extends FunctionReference<"query">> = (onValue: (value: FunctionReturnType<Q>) => void, onError: (error: Error) => void) => (() => void) | undefined;

/** Who the console's credential is to the farm: an operator key, a worker key that may manage (or may not), or none. */
export type ConsoleAccess = "operator" | "manager" | "notManager" | "none";

/** Jobs counted for a bulk question, at most (pages of 100, 50 pages): "1000+" past that. */
const COUNT_AT_MOST = 1_000;
const COUNT_PAGE = 100;
const COUNT_PAGES = 50;

/**
 * The operator's side of this window: every call the console makes to the farm (its subscriptions and its
 * actions), through the console's connection with the console's credential. The server checks the right on every
 * call; the console's views only ask, format and forward.
 */
export class ConsoleSession {
  readonly onDidChange: vscode.Event<void>;

  constructor(private readonly connection: ConsoleConnection) {
    this.onDidChange = connection.onDidChange;
  }

  credential(): ConsoleCredential | undefined {
    return this.connection.credential();
  }

  /** Whether the console may open with the credential it has (a worker key is asked whether it may manage). */
  async access(): Promise<ConsoleAccess> {
    const credential = this.connection.credential();
    if (!credential) return "none";
    if (credential.kind === "operator") return "operator";
    const overview = await this.connection.query(api.farm.overview, {});
    return overview.canManage ? "manager" : "notManager";
  }

  watchConnection(listener: (connected: boolean) => void): (() => void) | undefined {
    return this.connection.watchConnection(listener);
  }

  // What the console's pages show.
  readonly watchOverview: Watcher<typeof api.console.overview> = (onValue, onError) => this.connection.watch(api.console.overview, {}, onValue, onError);
  readonly watchAccess: Watcher<typeof api.consoleAccess.list> = (onValue, onError) => this.connection.watch(api.consoleAccess.list, {}, onValue, onError);
  readonly watchSchedules: Watcher<typeof api.consoleSchedules.list> = (onValue, onError) => this.connection.watch(api.consoleSchedules.list, {}, onValue, onError);

  watchJobs(filter: ConsoleJobFilter, numItems: number, cursor: string | null): Watcher<typeof api.console.jobs> {
    return (onValue, onError) => this.connection.watch(api.console.jobs, { filter, paginationOpts: { numItems, cursor } }, onValue, onError);
  }

  watchWorkers(numItems: number, cursor: string | null): Watcher<typeof api.console.workers> {
    return (onValue, onError) => this.connection.watch(api.console.workers, { paginationOpts: { numItems, cursor } }, onValue, onError);
  }

  watchLeaderboard(weekOf: number): Watcher<typeof api.console.leaderboard> {
    return (onValue, onError) => this.connection.watch(api.console.leaderboard, { weekOf }, onValue, onError);
  }

  watchEnergy(weekOf: number): Watcher<typeof api.console.energy> {
    return (onValue, onError) => this.connection.watch(api.console.energy, { weekOf }, onValue, onError);
  }

  watchJob(jobId: string): Watcher<typeof api.console.job> {
    return (onValue, onError) => this.connection.watch(api.console.job, { jobId }, onValue, onError);
  }

  watchBulk(bulkId: string): Watcher<typeof api.console.bulkStatus> {
    return (onValue, onError) => this.connection.watch(api.console.bulkStatus, { bulkId }, onValue, onError);
  }

  // What the console changes (the operator API, consoleActions:* and consoleAccess:*).
  retryJob = (jobId: string) => this.connection.run(api.consoleActions.retryJob, { jobId });
  setCacheUnvalidated = (on: boolean) => this.connection.run(api.consoleAccess.setCacheUnvalidated, { on });
  invalidateCache = (type: string) => this.connection.run(api.consoleActions.invalidateCache, { type });
  cancelJob = (jobId: string) => this.connection.run(api.consoleActions.cancelJob, { jobId });
  bulk = (action: "retry" | "cancel", filter: ConsoleJobFilter) => this.connection.run(api.consoleActions.bulk, { action, filter });
  purgeDead = (filter: Pick<ConsoleJobFilter, "type" | "from" | "to">) => this.connection.run(api.consoleActions.purgeDead, { type: filter.type, from: filter.from, to: filter.to });
  revokeWorker = (workerId: string) => this.connection.run(api.consoleAccess.revokeWorker, { workerId });
  revokeEnrollment = (enrollmentId: string) => this.connection.run(api.consoleAccess.revokeEnrollment, { enrollmentId });
  revokeClientKey = (clientKeyId: string) => this.connection.run(api.consoleAccess.revokeClientKey, { clientKeyId });
  revokeOperatorKey = (operatorKeyId: string) => this.connection.run(api.consoleAccess.revokeOperatorKey, { operatorKeyId });
  /** What revoking this operator key or worker also revokes (asked before the revoke). */
  minted = (keyId: string) => this.connection.query(api.consoleAccess.minted, { keyId });
  createEnrollment = (spec: { capabilities: string[]; maxConcurrentJobs: number; ttlMs: number; canManage: boolean; donor?: string }) =>
    this.connection.run(api.consoleAccess.createEnrollment, spec);
  createClientKey = (name: string, canPublish: boolean) => this.connection.run(api.consoleAccess.createClientKey, { name, canPublish });
  createOperatorKey = (name: string) => this.connection.run(api.consoleAccess.createOperatorKey, { name });
  pauseSchedule = (scheduleId: string) => this.connection.run(api.consoleSchedules.pause, { scheduleId });
  resumeSchedule = (scheduleId: string) => this.connection.run(api.consoleSchedules.resume, { scheduleId });
  removeSchedule = (scheduleId: string) => this.connection.run(api.consoleSchedules.remove, { scheduleId });
  setClientKeyLimits = (limits: Omit<FunctionArgs<typeof api.consoleAccess.setClientKeyLimits>, "apiKey">) => this.connection.run(api.consoleAccess.setClientKeyLimits, limits);
  fairnessWeights = (clientKeyId: string) => this.connection.query(api.consoleAccess.fairnessWeights, { clientKeyId });

  /** How many jobs of the filter have one of `statuses`, counted up to 1000 (`more`: there are more). */
  async countJobs(filter: ConsoleJobFilter, statuses: string[]): Promise<{ count: number; more: boolean }> {
    let count = 0;
    let cursor: string | null = null;
    for (let pages = 1; ; pages++) {
      const page: FunctionReturnType<typeof api.console.jobs> = await this.connection.query(api.console.jobs, { filter, paginationOpts: { numItems: COUNT_PAGE, cursor } });
      count += page.page.filter((j) => statuses.includes(j.status)).length;
      if (page.isDone) return { count, more: false };
      if (count >= COUNT_AT_MOST || pages >= COUNT_PAGES) return { count, more: true };
      cursor = page.continueCursor;
    }
  }
}

/** Check an operator key with its farm before it is kept: throws the farm's refusal (read it with describeError). */
export async function checkOperatorKey(url: string, key: string): Promise<void> {
  await new ConvexHttpClient(url).query(api.console.overview, { apiKey: key });
}
