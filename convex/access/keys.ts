/**
 * Secrets: 32 bytes from crypto.getRandomValues, base64url, behind a kind prefix. Inside a Convex
 * mutation this is the runtime's strong PRNG, seeded per execution by the server with a seed the
 * caller never sees, so keys are unguessable; only their SHA-256 is stored.
 */
/** Worker key, client key, enrollment token, webhook signing secret, operator key. */
export type SecretKind = "fh_w_" | "fh_c_" | "fh_e_" | "fh_h_" | "fh_o_";

const SECRET_BYTES = 32;
const BODY_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newSecret(kind: SecretKind): string {
  return kind + base64Url(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
}

/**
 * A lease id: not a credential, just unique and unpredictable. It names its job ("fh_l_<jobId>.<random>"),
 * so every worker write finds the job with one point read.
 */
export function newLeaseId(jobId: string): string {
  return `fh_l_${jobId}.${base64Url(crypto.getRandomValues(new Uint8Array(16)))}`;
}

/** The job id a lease id names, or null for one that names none (malformed, or made by an older version). */
export function jobIdOfLease(leaseId: string): string | null {
  const match = /^fh_l_([A-Za-z0-9]+)\.[A-Za-z0-9_-]{22}$/.exec(leaseId);
  return match ? match[1] : null;
}

export function looksLikeSecret(kind: SecretKind, value: string): boolean {
  return value.startsWith(kind) && BODY_PATTERN.test(value.slice(kind.length));
}

/** What an operator sees to tell keys apart; too short to help a guesser. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, 9);
}

export async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

function base64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}
