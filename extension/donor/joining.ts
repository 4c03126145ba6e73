import * as vscode from "vscode";
import { hostname } from "node:os";
import { notConvexMessage } from "../worker/deploymentProbe";
import type { DescribedError } from "../worker/errors";
import { measureFacts } from "../worker/machineFacts";
import type { EngineHandlers } from "./engineHandlers";
import { answersLikeConvex, enroll, isHttpUrl } from "./enrollment";
import type { Membership } from "./membership";

/**
 * Join the farm at `url` with an enrollment token (fh_e_…) or a worker key (fh_w_…): this machine introduces itself
 * (its name, the capabilities its handlers offer, its facts measured here), and the key the farm accepts is kept in
 * SecretStorage. Throws the farm's error as it came (read it with describeError, explain it with joinProblem).
 */
export async function joinThisMachine(membership: Membership, handlers: EngineHandlers, url: string, secret: string): Promise<void> {
  const capabilities = await handlers.registry.capabilities();
  const name = `${vscode.env.appName} on ${hostname() || "this machine"}`.slice(0, 100);
  const apiKey = await enroll(url, secret, { name, machineId: vscode.env.machineId, capabilities, facts: await measureFacts() });
  await membership.join(url, apiKey);
}

/** The farm's own words, and what to do next; an answer without a code from something that is not a farm says so. */
export async function joinProblem(url: string, error: DescribedError): Promise<string> {
  if (error.kind === "unreachable") return `the deployment URL is unreachable (${error.code}) — check it and your connection`;
  if (error.kind === "failed" && !error.code && isHttpUrl(url) && !(await answersLikeConvex(url))) {
    return notConvexMessage(url);
  }
  const next = error.code ? NEXT_STEP[error.code] : undefined;
  return next ? `${error.message} — ${next}` : error.message;
}

const NEXT_STEP: Record<string, string> = {
  token_expired: "ask your operator for a new token",
  token_used: "each token joins one machine; ask your operator for another",
  bad_key: "check the token or key, or ask your operator for a new one",
  revoked: "this machine was removed from the farm; ask your operator for a new token",
};
