import { ConvexHttpClient } from "convex/browser";
import { api } from "../../convex/_generated/api";

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
    await client.query(api.workers.mine, { apiKey: secret }); // refuses a bad or revoked key with its code
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
