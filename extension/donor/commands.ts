import * as vscode from "vscode";
import { makeFunctionReference } from "convex/server";
import type { Donor } from "./donor";
import type { FarmConnection } from "./farmConnection";
import type { FarmSession } from "./farmSession";
import type { HandlerRegistry } from "./handlers";
import type { Membership } from "./membership";
import { joinFarm, type JoinArgs } from "./views/joinFlow";
import type { PanelRequest } from "./views/panelProtocol";

const SNOOZE_MS = 60 * 60_000;
const manage = (name: string) => makeFunctionReference<"mutation", { apiKey: string; jobId: string }, unknown>(`farm:${name}`);

export type CommandDeps = {
  membership: Membership;
  donor: Donor;
  session: FarmSession;
  connection: FarmConnection;
  registry: HandlerRegistry;
  log: vscode.LogOutputChannel;
};

/** A job id from a command's argument: a tree node (running job or dead letter) or the id itself. */
type JobArg = string | { job?: { jobId: string }; dead?: { jobId: string } } | undefined;
const jobIdOf = (arg: JobArg) => (typeof arg === "string" ? arg : (arg?.dead?.jobId ?? arg?.job?.jobId));

/** Everything a donor (or an operator with a managing key) can ask Farmhand to do. */
export function createCommands({ membership, donor, session, connection, registry, log }: CommandDeps) {
  let provisioning: Promise<void> | undefined;

  const join = async (args?: JoinArgs) => joinFarm(membership, await registry.capabilities(), log, args);

  const manageJob = (action: "retryDead" | "purgeDead" | "cancelJob", done: string) => async (arg: JobArg) => {
    const jobId = jobIdOf(arg);
    if (!jobId) return;
    try {
      await connection.run(manage(action), { jobId });
      void vscode.window.showInformationMessage(`Farmhand: ${done}.`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log.error(`${action} ${jobId} failed: ${message}`);
      void vscode.window.showErrorMessage(`Farmhand: ${message}`, "Show Log").then((c) => c && log.show());
    }
  };

  const commands = {
    join,
    toggle: async () => {
      await provisioning; // a provisioned join in flight decides whether this click toggles or asks to join
      if (!membership.joined) return join();
      if (session.resumeAfterAutoPause()) return;
      return donor.setWanted(!donor.wanted);
    },
    snooze: async () => {
      await donor.snooze(SNOOZE_MS);
      void vscode.window.showInformationMessage("Farmhand: snoozed for an hour. Running jobs finish; no new ones start.");
    },
    finishAndStop: async () => {
      await session.drain();
      await donor.setWanted(false);
      void vscode.window.showInformationMessage("Farmhand: current jobs finished; donating is off.");
    },
    leave: async () => {
      const sure = await vscode.window.showWarningMessage("Leave the farm? Running jobs go back to the queue and the key is forgotten.", { modal: true }, "Leave Farm");
      if (sure !== "Leave Farm") return;
      await session.stop("left the farm");
      await donor.setWanted(false);
      await membership.leave();
      log.info("Left the farm");
    },
    giveBackJob: (arg: JobArg) => {
      const jobId = jobIdOf(arg);
      return jobId ? session.giveBack(jobId) : false;
    },
    retryDead: manageJob("retryDead", "the job is queued again"),
    purgeDead: manageJob("purgeDead", "the dead letter is deleted"),
    cancelJob: manageJob("cancelJob", "the job is canceled"),
    showLog: () => log.show(),
  };

  /** The control panel's requests map onto the same commands. */
  const perform = (r: Exclude<PanelRequest, { type: "ready" }>): unknown =>
    "jobId" in r ? commands[r.type](r.jobId) : r.type === "join" ? join() : commands[r.type]();

  /** Provisioning (fleets, demos): join once from FARMHAND_JOIN_URL + FARMHAND_JOIN_TOKEN when not joined yet. */
  const joinFromEnvironment = () => {
    const url = process.env.FARMHAND_JOIN_URL;
    const token = process.env.FARMHAND_JOIN_TOKEN;
    if (membership.joined || !url || !token) return;
    provisioning = join({ url, token }).then(
      () => undefined,
      (error) => log.error(`Provisioned join failed: ${error instanceof Error ? error.message : error}`),
    );
  };

  const register = (): vscode.Disposable[] =>
    Object.entries(commands).map(([name, run]) => vscode.commands.registerCommand(`farmhand.${name}`, run as (...args: unknown[]) => unknown));

  return { commands, perform, joinFromEnvironment, register };
}
