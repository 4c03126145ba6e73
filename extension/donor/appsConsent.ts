import * as vscode from "vscode";

const SETTING = "runApps";

/** The donor allowed farm apps (user settings only: a workspace can never turn it on). */
export function runAppsAllowed(): boolean {
  return vscode.workspace.getConfiguration("farmhand").inspect<unknown>(SETTING)?.globalValue === true;
}

/** What an app can and cannot do, in the donor's terms (the consent prompt and the setting say the same). */
const APPS_CONSENT_DETAIL =
  "Apps are programs your farm's operators publish, run here while you donate. " +
  "An app runs in a sandbox at the lowest priority and gets only its job's input: it cannot read or change your files, " +
  "use the network, see your environment variables or other programs, and it is stopped at its memory and time limits. " +
  "It does use this machine's CPU and memory, like any job. You can change this any time in the setting Farmhand: Run Apps.";

/**
 * Once per machine, at join: ask whether this machine may run the farm's apps. The answer is kept in the
 * machine-scoped user setting `farmhand.runApps`, so a donor who answered is not asked again; closing the prompt
 * without an answer changes nothing (they are asked at the next join).
 */
export async function askToRunApps(): Promise<void> {
  if (vscode.workspace.getConfiguration("farmhand").inspect<unknown>(SETTING)?.globalValue !== undefined) return;
  const answer = await askConsent();
  if (answer === undefined) return;
  await setRunApps(answer);
}

/**
 * The panel's "Allow apps" (and the command): the same plain-words consent as at join, modal; only an explicit
 * "Allow Apps" turns the setting on. Returns whether apps are allowed now.
 */
export async function allowApps(): Promise<boolean> {
  if (runAppsAllowed()) return true;
  if ((await askConsent()) !== true) return false;
  await setRunApps(true);
  return true;
}

/** The panel's "Stop running apps": off at once (the engine stops offering apps; a running app job finishes). */
export async function stopApps(): Promise<void> {
  await setRunApps(false);
}

/** The consent question: true (allow), false (not now), undefined (closed without an answer). */
async function askConsent(): Promise<boolean | undefined> {
  const allow = "Allow Apps";
  const answer = await vscode.window.showInformationMessage(
    "Farmhand: may this machine run the farm's apps?",
    { modal: true, detail: APPS_CONSENT_DETAIL },
    allow,
    "Not Now",
  );
  return answer === undefined ? undefined : answer === allow;
}

/** Machine-scoped, so the user (global) settings: a workspace can never turn it on. */
async function setRunApps(allow: boolean): Promise<void> {
  await vscode.workspace.getConfiguration("farmhand").update(SETTING, allow, vscode.ConfigurationTarget.Global);
}
