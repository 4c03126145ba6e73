import * as vscode from "vscode";
import { api } from "../../convex/_generated/api";
import type { DonorState } from "../donorState/donorState";
import { finishingMessage } from "../donorState/donorStateText";
import { isJobId, type PanelRequest } from "../protocol/panelProtocol";
import { describeError } from "../worker/errors";
import { allowApps, stopApps } from "./appsConsent";
import { cancelOutcome } from "./cancelOutcome";
import type { Donor } from "./donor";
import type { FarmConnection } from "./farmConnection";
import type { FarmSession } from "./farmSession";
import type { Membership } from "./membership";

const SNOOZE_MS = 60 * 60_000;

/** A scripted join's arguments (`executeCommand("farmhand.join", { url, token })`). */
export type JoinRequest = { url: string; token: string };

export type CommandDeps = {
  membership: Membership;
  donor: Donor;
  session: FarmSession;
  connection: FarmConnection;
  /** The join dialog (views/joinFlow): asks the donor unless given a scripted request; true once joined. */
  join: (request?: JoinRequest) => Promise<boolean>;
  log: vscode.LogOutputChannel;
  /** The donor state as every surface shows it, derived afresh: what a click does is read from it. */
  state: () => DonorState;
};

/** A job id from a command's argument: a tree node (running job or dead letter) or the id itself. */
type JobArg = string | { job?: { jobId: string }; dead?: { jobId: string } } | undefined;
const jobIdOf = (arg: JobArg) => (typeof arg === "string" ? arg : (arg?.dead?.jobId ?? arg?.job?.jobId));

/** Everything a donor (or an operator with a managing key) can ask Farmhand to do. */
export function createCommands({ membership, donor, session, connection, join, log, state }: CommandDeps) {
  let provisioning: Promise<void> | undefined;

  /** Run one managing call on a job and tell the donor what happened, in the farm's own words when it refused. */
  const manageJob = (action: string, call: (jobId: string) => Promise<string>, confirm?: { question: string; button: string }) => async (arg: JobArg) => {
    const jobId = jobIdOf(arg) ?? (await askJobId(action));
    if (!jobId) return;
    if (confirm && (await vscode.window.showWarningMessage(confirm.question, { modal: true, detail: `Job ${jobId}` }, confirm.button)) !== confirm.button) return;
    try {
      void vscode.window.showInformationMessage(`Farmhand: ${await call(jobId)}.`);
    } catch (error) {
      const { message, code } = describeError(error);
      log.error(`${action} ${jobId} failed${code ? ` (${code})` : ""}: ${message}`);
      void vscode.window.showErrorMessage(`Farmhand: could not ${action}: ${message}`, "Show Log").then((c) => c && log.show());
    }
  };

  const commands = {
    join: (request?: JoinRequest) => join(request),
    toggle: async () => {
      await provisioning; // a provisioned join in flight decides whether this click toggles or asks to join
      switch (state().toggle) {
        case "join":
        case "rejoin":
          return join();
        case "resume":
          session.resumeAfterAutoPause();
          return;
        case "start":
          return donor.setWanted(true);
        case "stop":
        case "stopNow":
          return donor.setWanted(false);
      }
    },
    /** The Farm view's title button while donating is off (or paused by the engine). */
    startDonating: async () => {
      const { toggle } = state();
      if (toggle === "resume") session.resumeAfterAutoPause();
      else if (toggle === "start") await donor.setWanted(true);
    },
    /** The Farm view's title button while donating is on: running jobs go back to the queue. */
    stopDonating: () => donor.setWanted(false),
    /** Lift the current pause with its setting: ask (remote donation) or open the settings editor on it. */
    fixPause: () => fixPause(state().actions.fix),
    snooze: async () => {
      await donor.snooze(SNOOZE_MS);
      void vscode.window.showInformationMessage("Farmhand: snoozed for an hour. Running jobs finish; no new ones start.");
    },
    finishAndStop: async () => {
      const running = state().jobs.length;
      void vscode.window.showInformationMessage(finishingMessage(running));
      await session.drain();
      // Stop Now while finishing switched donating off already, giving the jobs back: they did not finish.
      const finished = donor.wanted;
      await donor.setWanted(false);
      if (running > 0 && finished) void vscode.window.showInformationMessage("Farmhand: current jobs finished; donating is off.");
    },
    leave: async () => {
      const sure = await vscode.window.showWarningMessage("Leave the farm? Running jobs go back to the queue and the key is forgotten.", { modal: true }, "Leave Farm");
      if (sure !== "Leave Farm") return;
      await session.stop({ kind: "user", detail: "left the farm" });
      await donor.setWanted(false);
      try {
        // The farm revokes this key and its row goes offline at once, rather than lingering "online".
        await connection.run(api.workers.leave, {});
      } catch (error) {
        const { message, kind } = describeError(error);
        // A key the farm already refused is gone there too; otherwise say the farm still lists this machine.
        if (kind !== "refused") void vscode.window.showWarningMessage(`Farmhand left the farm here, but could not tell the farm (${message}): it lists this machine until its operator removes it.`);
        log.warn(`Could not tell the farm this machine left: ${message}`);
      }
      await membership.leave();
      log.info("Left the farm");
    },
    giveBackJob: (arg: JobArg) => {
      const jobId = jobIdOf(arg);
      return jobId ? session.giveBack(jobId) : false;
    },
    retryDead: manageJob("retry the dead letter", async (jobId) => {
      await connection.run(api.consoleActions.retryJob, { jobId });
      return "the job is queued again";
    }),
    purgeDead: manageJob(
      "delete the dead letter",
      async (jobId) => {
        await connection.run(api.consoleActions.purgeJob, { jobId });
        return "the dead letter is deleted";
      },
      { question: "Delete this dead letter? Its payload and error are gone for good: it cannot be retried afterwards.", button: "Delete" },
    ),
    cancelJob: manageJob("cancel the job", async (jobId) => cancelOutcome(await connection.run(api.consoleActions.cancelJob, { jobId }))),
    /** Asks the plain-words consent (modal) first; the engine's handlers follow the setting. */
    allowApps: async () => {
      if (await allowApps()) log.info("The donor allowed this machine to run the farm's apps");
    },
    stopApps: async () => {
      await stopApps();
      log.info("The donor stopped this machine running the farm's apps");
    },
    showLog: () => log.show(),
  };

  /** The control panel's requests map onto the same commands. */
  const perform = (r: Exclude<PanelRequest, { type: "ready" }>): unknown => {
    if (r.type === "setRunApps") return r.allow ? commands.allowApps() : commands.stopApps();
    return "jobId" in r ? commands[r.type](r.jobId) : commands[r.type]();
  };

  /** Provisioning (fleets, demos): join once from FARMHAND_JOIN_URL + FARMHAND_JOIN_TOKEN when not joined yet. */
  const joinFromEnvironment = () => {
    const url = process.env.FARMHAND_JOIN_URL;
    const token = process.env.FARMHAND_JOIN_TOKEN;
    if (membership.joined || !url || !token) return;
    provisioning = join({ url, token }).then(
      () => undefined,
      (error: unknown) => log.error(`Provisioned join failed: ${describeError(error).message}`),
    );
  };

  const register = (): vscode.Disposable[] =>
    Object.entries(commands).map(([name, run]) => vscode.commands.registerCommand(`farmhand.${name}`, run as (...args: unknown[]) => unknown));

  return { commands, perform, joinFromEnvironment, register };
}

/**
 * Farmhand's settings are machine-scoped (a workspace cannot add a recipe): in a remote window they live on the
 * Remote tab, so the editor opens there. Remote donation is a question, not a search.
 */
async function fixPause(fix: DonorState["actions"]["fix"]): Promise<void> {
  if (!fix) return;
  if (fix.how === "ask") {
    const allow = await vscode.window.showWarningMessage(
      "Donate from this remote window? Jobs will run on the remote machine this window is connected to.",
      { modal: true },
      "Allow",
    );
    if (allow === "Allow") await vscode.workspace.getConfiguration("farmhand").update(fix.setting.replace(/^farmhand\./, ""), true, vscode.ConfigurationTarget.Global);
    return;
  }
  const command = fix.tab === "remote" ? "workbench.action.openRemoteSettings" : "workbench.action.openSettings";
  await vscode.commands.executeCommand(command, { query: fix.setting });
}

/** From the command palette: the job's id (the Farm view and the panel pass it along). */
function askJobId(action: string): Thenable<string | undefined> {
  return vscode.window
    .showInputBox({
      title: `Farmhand: ${action}`,
      prompt: "The job's id",
      ignoreFocusOut: true,
      validateInput: (value) => (isJobId(value.trim()) ? undefined : "A job id is lowercase letters and digits"),
    })
    .then((v) => v?.trim() || undefined);
}
