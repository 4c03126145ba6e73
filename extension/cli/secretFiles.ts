import { join } from "node:path";
import { userStateDir } from "../policy/privateFiles";
import { readKeyFile, writeKeyFile, type StoredKey } from "./keyFile";

/**
 * The operator's and the submitter's key files, beside the worker's (`worker.json`) in Farmhand's per-user folder
 * (`$XDG_CONFIG_HOME/farmhand`, else `~/.config/farmhand`; `%APPDATA%\farmhand` on Windows), written and read
 * like it (mode 0600, refused when others can read it): `{ "url", "apiKey", "name" }`.
 *   client.json   a client key (fh_c_…): what `npm start` writes, and where a submitter (the SDK) finds its key
 *                 when FARMHAND_CLIENT_KEY is not set
 *   operator.json an operator key (fh_o_…) for the CLI's operator commands when FARMHAND_OPERATOR_KEY is not set
 */
export type SecretFileKind = "client" | "operator";

export function secretFilePath(kind: SecretFileKind, env: NodeJS.ProcessEnv = process.env): string {
  return join(userStateDir(env), `${kind}.json`);
}

export type StoredSecret = { url: string; key: string; name: string };

export function writeSecretFile(path: string, secret: StoredSecret): void {
  // the worker key file's writer and format; a client or operator key has no worker id
  writeKeyFile(path, { url: secret.url, apiKey: secret.key, name: secret.name } as StoredKey);
}

/** The key kept in the file; undefined when there is none. Throws when the file is unreadable or others may read it. */
export function readSecretFile(path: string): StoredSecret | undefined {
  const stored = readKeyFile(path);
  return stored && { url: stored.url, key: stored.apiKey, name: typeof stored.name === "string" ? stored.name : "" };
}
