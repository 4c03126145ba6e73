import * as vscode from "vscode";
import { ConvexHttpClient } from "convex/browser";
import { ConvexError } from "convex/values";
import { makeFunctionReference } from "convex/server";
import type { Membership } from "../membership";

const enroll = makeFunctionReference<
  "mutation",
  { token: string; name: string; machineId: string; capabilities: string[] },
  { workerId: string; apiKey: string }
>("workers:enroll");
const mine = makeFunctionReference<"query", { apiKey: string }, unknown>("workers:mine");

/** Arguments for scripted joins (`executeCommand("farmhand.join", { url, token })`); otherwise the donor is asked. */
export type JoinArgs = { url: string; token: string };

/**
 * `Farmhand: Join a Farm…` — asks for the deployment URL and an enrollment token (fh_e_…) or an existing worker
 * key (fh_w_…), checks it with the farm, and keeps the key only in SecretStorage.
 * Returns true once joined.
 */
export async function joinFarm(
  membership: Membership,
  capabilities: string[],
  log: vscode.LogOutputChannel,
  args?: JoinArgs,
): Promise<boolean> {
  const scripted = args && typeof args.url === "string" && typeof args.token === "string";
  const url = scripted ? args.url.trim() : await askUrl(membership.url);
  if (url === undefined) return false;
  const secret = scripted ? args.token.trim() : await askSecret();
  if (secret === undefined) return false;

  try {
    if (!isHttpUrl(url)) throw new Error(`"${url}" is not an http(s) URL`);
    const client = new ConvexHttpClient(url);
    let apiKey: string;
    if (secret.startsWith("fh_w_")) {
      await client.query(mine, { apiKey: secret }); // refuses a bad or revoked key with a clear error
      apiKey = secret;
    } else {
      ({ apiKey } = await client.mutation(enroll, {
        token: secret,
        name: `${vscode.env.appName} on ${process.env.HOSTNAME ?? "this machine"}`.slice(0, 100),
        machineId: vscode.env.machineId,
        capabilities,
      }));
    }
    await membership.join(url, apiKey);
    log.info(`Joined the farm at ${url}`);
    if (!scripted) void vscode.window.showInformationMessage("Farmhand: joined the farm. Click Farmhand in the status bar to start donating.");
    return true;
  } catch (error) {
    const message = describeJoinError(error);
    log.error(`Joining the farm at ${url} failed: ${message}`);
    if (scripted) throw new Error(`Farmhand could not join the farm: ${message}`);
    const again = await vscode.window.showErrorMessage(`Farmhand could not join the farm: ${message}`, "Try Again");
    return again ? joinFarm(membership, capabilities, log) : false;
  }
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
      validateInput: (value) => (value.trim() ? undefined : "The token is required"),
    })
    .then((v) => v?.trim());
}

function isHttpUrl(value: string): boolean {
  try {
    const parsed = new URL(value);
    return parsed.protocol === "https:" || parsed.protocol === "http:";
  } catch {
    return false;
  }
}

function describeJoinError(error: unknown): string {
  if (error instanceof ConvexError) {
    const data = error.data as { message?: string; code?: string } | string;
    if (typeof data === "string") return data;
    const next = NEXT_STEP[data.code ?? ""];
    return `${data.message ?? data.code ?? "the farm refused the token"}${next ? ` — ${next}` : ""}`;
  }
  const text = error instanceof Error ? error.message : String(error);
  if (/fetch failed|ECONNREFUSED|ENOTFOUND|EAI_AGAIN/i.test(text)) return "the deployment URL is unreachable — check it and your connection";
  if (/Could not find public function/i.test(text)) return "that URL is a Convex deployment, but not a Farmhand farm — check the URL with your operator";
  return text;
}

const NEXT_STEP: Record<string, string> = {
  token_expired: "ask your operator for a new token",
  token_used: "each token joins one machine; ask your operator for another",
  bad_key: "check the token or key, or ask your operator for a new one",
  revoked: "this machine was removed from the farm; ask your operator for a new token",
};
