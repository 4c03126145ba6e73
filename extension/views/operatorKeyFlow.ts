import * as vscode from "vscode";
import { checkOperatorKey } from "../donor/consoleSession";
import { isHttpUrl, operatorKeyProblem } from "../donor/enrollment";
import type { StoredOperatorKey } from "../donor/operatorKey";
import { describeError } from "../worker/errors";

/**
 * Ask for an operator key (fh_o_…) — and the farm's URL when this machine knows none — and check it with the farm
 * before it is kept. `why`: what the prompt says first (why the console asks). Undefined when the operator gives up.
 */
export async function askOperatorKey(options: { url?: string; why?: string }): Promise<StoredOperatorKey | undefined> {
  const url = options.url ?? (await askUrl());
  if (!url) return undefined;
  for (;;) {
    const key = await vscode.window.showInputBox({
      title: "Farmhand Console: Operator Key",
      prompt: `${options.why ? `${options.why} ` : ""}Enter an operator key (fh_o_…) of the farm at ${url}.`,
      placeHolder: "fh_o_…",
      password: true,
      ignoreFocusOut: true,
      validateInput: (value) => operatorKeyProblem(value),
    });
    if (key === undefined) return undefined;
    const trimmed = key.trim();
    try {
      await checkOperatorKey(url, trimmed);
      return { url, key: trimmed };
    } catch (error) {
      const again = await vscode.window.showErrorMessage(`Farmhand: the farm refused this operator key: ${describeError(error).message}`, "Try Again");
      if (!again) return undefined;
    }
  }
}

function askUrl(): Thenable<string | undefined> {
  return vscode.window
    .showInputBox({
      title: "Farmhand Console: Farm URL",
      prompt: "The farm's Convex deployment URL",
      placeHolder: "https://happy-otter-123.convex.cloud",
      ignoreFocusOut: true,
      validateInput: (value) => (isHttpUrl(value.trim()) ? undefined : "Enter an http(s) URL, e.g. https://name.convex.cloud"),
    })
    .then((v) => v?.trim() || undefined);
}
