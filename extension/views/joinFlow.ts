import * as vscode from "vscode";
import { askToRunApps } from "../donor/appsConsent";
import { localOllamaModels, offeredModels, offerModels, type EngineHandlers } from "../donor/engineHandlers";
import { isHttpUrl, secretProblem } from "../donor/enrollment";
import { joinProblem, joinThisMachine } from "../donor/joining";
import type { Membership } from "../donor/membership";
import { describeError } from "../worker/errors";

export type JoinDeps = {
  membership: Membership;
  handlers: EngineHandlers;
  log: vscode.LogOutputChannel;
  /** The toast once joined, from the donor state as it is then (it says what the status bar says). */
  joinedMessage: () => string;
};

/** Arguments for scripted joins (`executeCommand("farmhand.join", { url, token })`); otherwise the donor is asked. */
export type JoinArgs = { url: string; token: string };

/**
 * `Farmhand: Join a Farm…` — asks for the deployment URL and an enrollment token (fh_e_…) or an existing worker
 * key (fh_w_…), checks it with the farm, and keeps the key only in SecretStorage.
 * Returns true once joined.
 */
export async function joinFarm(deps: JoinDeps, args?: JoinArgs, typedUrl?: string): Promise<boolean> {
  const { membership, handlers, log } = deps;
  const scripted = args && typeof args.url === "string" && typeof args.token === "string";
  const url = scripted ? args.url.trim() : await askUrl(typedUrl ?? membership.url);
  if (url === undefined) return false;
  const secret = scripted ? args.token.trim() : await askSecret();
  if (secret === undefined) return false;
  const wrong = secretProblem(secret);
  if (wrong) return failed(deps, Boolean(scripted), url, wrong);
  if (!scripted) await chooseOllamaModels(handlers);
  if (!scripted) await askToRunApps();

  try {
    await joinThisMachine(membership, handlers, url, secret);
    log.info(`Joined the farm at ${url}`);
    if (!scripted) void vscode.window.showInformationMessage(deps.joinedMessage());
    return true;
  } catch (error) {
    return failed(deps, Boolean(scripted), url, await joinProblem(url, describeError(error)));
  }
}

/** Say why joining failed; Try Again asks again with the URL as typed. A scripted join throws it. */
async function failed(deps: JoinDeps, scripted: boolean, url: string, message: string): Promise<boolean> {
  deps.log.error(`Joining the farm at ${url} failed: ${message}`);
  if (scripted) throw new Error(`Farmhand could not join the farm: ${message}`);
  const again = await vscode.window.showErrorMessage(`Farmhand could not join the farm: ${message}`, "Try Again");
  return again ? joinFarm(deps, undefined, url) : false;
}

function askUrl(current: string): Thenable<string | undefined> {
  return vscode.window
    .showInputBox({
      title: "Join a Farm (1/2)",
      prompt: "The farm's Convex deployment URL, from your operator",
      placeHolder: "https://happy-otter-123.convex.cloud",
      value: current,
      ignoreFocusOut: true,
      validateInput: (value) => (isHttpUrl(value.trim()) ? undefined : "Enter an http(s) URL, e.g. https://name.convex.cloud"),
    })
    .then((v) => v?.trim());
}

function askSecret(): Thenable<string | undefined> {
  return vscode.window
    .showInputBox({
      title: "Join a Farm (2/2)",
      prompt: "The enrollment token from your operator (fh_e_…), or an existing worker key (fh_w_…)",
      password: true,
      ignoreFocusOut: true,
      validateInput: (value) => secretProblem(value),
    })
    .then((v) => v?.trim());
}

/**
 * Offering local Ollama models is the donor's choice: when Ollama runs here, ask which of its models the farm may
 * use (none picked: Ollama is not offered). Escape keeps the choice as it was.
 */
async function chooseOllamaModels(handlers: EngineHandlers): Promise<void> {
  const models = await localOllamaModels();
  if (models.length === 0) return;
  const offered = offeredModels();
  const picked = await vscode.window.showQuickPick(
    models.map((model) => ({ label: model, picked: offered.includes(model.toLowerCase()) })),
    {
      title: "Join a Farm: offer local Ollama models?",
      placeHolder: "Pick the models the farm may run on this machine; pick none to offer no model",
      canPickMany: true,
      ignoreFocusOut: true,
    },
  );
  if (!picked) return;
  await offerModels(picked.map((p) => p.label.toLowerCase()));
  handlers.reload();
}
