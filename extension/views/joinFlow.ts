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

/** `Farmhand: Join a Farm…` — asks for the deployment URL and an enrollment token, enrolls, keeps the key secret. */
export async function joinFarm(membership: Membership, capabilities: string[], log: vscode.LogOutputChannel): Promise<void> {
  const url = await vscode.window.showInputBox({
    title: "Join a Farm (1/2)",
    prompt: "The farm's Convex deployment URL, from your operator",
    placeHolder: "https://happy-otter-123.convex.cloud",
    value: membership.url,
    ignoreFocusOut: true,
    validateInput: (value) => (isHttpUrl(value.trim()) ? undefined : "Enter an http(s) URL, e.g. https://name.convex.cloud"),
  });
  if (url === undefined) return;
  const token = await vscode.window.showInputBox({
    title: "Join a Farm (2/2)",
    prompt: "The enrollment token your operator gave you (fh_e_…)",
    password: true,
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim() ? undefined : "The token is required"),
  });
  if (token === undefined) return;

  try {
    const client = new ConvexHttpClient(url.trim());
    const { apiKey } = await client.mutation(enroll, {
      token: token.trim(),
      name: vscode.env.appName + " on " + (process.env.HOSTNAME ?? "this machine"),
      machineId: vscode.env.machineId,
      capabilities,
    });
    await membership.join(url.trim(), apiKey);
    log.info(`Joined the farm at ${url.trim()}`);
    void vscode.window.showInformationMessage("Farmhand: joined the farm. Flip the status-bar toggle to start donating.");
  } catch (error) {
    const message = describeJoinError(error);
    log.error(`Joining the farm at ${url.trim()} failed: ${message}`);
    const again = await vscode.window.showErrorMessage(`Farmhand could not join the farm: ${message}`, "Try Again");
    if (again) await joinFarm(membership, capabilities, log);
  }
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
    return data.message ?? data.code ?? "the farm refused the token";
  }
  const text = error instanceof Error ? error.message : String(error);
  if (/fetch failed|ECONNREFUSED|ENOTFOUND/i.test(text)) return "the deployment URL is unreachable — check it and your connection";
  return text;
}
