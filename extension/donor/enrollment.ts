import { ConvexHttpClient } from "convex/browser";
import { api } from "../../convex/_generated/api";

import { probeDeployment } from "../worker/deploymentProbe";
import type { MachineFacts } from "../worker/machineFacts";

/** How this machine introduces itself when it enrolls (`facts`: what it has, measured here). */
export type MachineIdentity = { name: string; machineId: string; capabilities: string[]; facts?: MachineFacts };

/**
 * Turn what the operator handed out into a worker key the farm accepts: an enrollment token (fh_e_…) is redeemed
 * (it works once), an existing worker key (fh_w_…) is checked with the farm. Throws the farm's error as it came
 * (read it with describeError).
 */
export async function enroll(url: string, secret: string, machine: MachineIdentity): Promise<string> {
  if (!isHttpUrl(url)) throw new Error(`"${url}" is not an http(s) URL`);
  const client = new ConvexHttpClient(url);
  if (secret.startsWith("fh_w_")) {
    await client.query(api.workers.checkKey, { apiKey: secret }); // refuses a bad or revoked key with its code
    return secret;
  }
  const { apiKey } = await client.mutation(api.workers.enroll, { token: secret, ...machine });
  return apiKey;
}

export function isHttpUrl(value: string): boolean {
  try {
    const parsed = new URL(value);
    return parsed.protocol === "https:" || parsed.protocol === "http:";
  } catch {
    return false;
  }
}

/** What is wrong with a pasted token or key, before the farm is asked; undefined when it looks right. */
export function secretProblem(value: string): string | undefined {
  const secret = value.trim();
  if (!secret) return "The token is required";
  if (secret.startsWith("fh_o_")) return "This is an operator key (fh_o_…), for the console: run Farmhand: Open Console with it. Joining takes an enrollment token (fh_e_…) or a worker key (fh_w_…)";
  if (secret.startsWith("fh_c_")) return "This is a client key (fh_c_…), for submitting jobs: joining takes an enrollment token (fh_e_…) or a worker key (fh_w_…)";
  const kind = secret.startsWith("fh_e_") ? "An enrollment token" : secret.startsWith("fh_w_") ? "A worker key" : undefined;
  if (!kind) return "An enrollment token starts with fh_e_ (a worker key with fh_w_): copy it again from your operator";
  const body = secret.slice(SECRET_PREFIX_LENGTH);
  const foreign = [...new Set(body.replace(/[A-Za-z0-9_-]/g, ""))];
  if (foreign.length > 0) {
    return `${kind} has only letters, digits, "-" and "_" after ${secret.slice(0, SECRET_PREFIX_LENGTH)}; this one also has ${foreign.map((c) => JSON.stringify(c)).join(" ")}`;
  }
  if (body.length !== SECRET_BODY_LENGTH) {
    return `${kind} has ${SECRET_BODY_LENGTH} characters after ${secret.slice(0, SECRET_PREFIX_LENGTH)}; this one has ${body.length}: copy it again in full`;
  }
  return undefined;
}

const SECRET_PREFIX_LENGTH = "fh_e_".length;
/** 32 random bytes, base64url without padding (convex/access/keys.ts). */
const SECRET_BODY_LENGTH = 43;

/** Whether `url` answers a function call the way a Convex deployment does (see probeDeployment). */
export async function answersLikeConvex(url: string, timeoutMs = 5_000): Promise<boolean> {
  return (await probeDeployment(url, timeoutMs)) === "convex";
}

/** What is wrong with a pasted operator key, before the farm is asked; undefined when it looks right. */
export function operatorKeyProblem(value: string): string | undefined {
  const key = value.trim();
  if (!key) return "The operator key is required";
  if (/^fh_[cew]_/.test(key)) return "An operator key starts with fh_o_ (this is a worker key, client key or enrollment token): create one on the console's Access page or with admin:createOperatorKey";
  if (!key.startsWith("fh_o_")) return "An operator key starts with fh_o_: copy it again";
  const body = key.slice(SECRET_PREFIX_LENGTH);
  if (!/^[A-Za-z0-9_-]*$/.test(body)) return 'An operator key has only letters, digits, "-" and "_" after fh_o_';
  if (body.length !== SECRET_BODY_LENGTH) return `An operator key has ${SECRET_BODY_LENGTH} characters after fh_o_; this one has ${body.length}: copy it again in full`;
  return undefined;
}
