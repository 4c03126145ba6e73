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
  const allow = "Allow Apps";
  const answer = await vscode.window.showInformationMessage(
    "Farmhand: may this machine run the farm's apps?",
    { modal: true, detail: APPS_CONSENT_DETAIL },
    allow,
    "Not Now",
  );
  if (answer === undefined) return;
  await vscode.workspace.getConfiguration("farmhand").update(SETTING, answer === allow, vscode.ConfigurationTarget.Global);
}
