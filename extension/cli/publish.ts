import { readFile, stat } from "node:fs/promises";
import { parseArgs } from "node:util";
import { APP_LIMITS, TIMING } from "../../convex/contract";
import { siteUrlFor } from "../handlers/apps/siteUrl";
import { checkHttpUrl, wholeNumber } from "./flagValues";
import { readSecretFile, secretFilePath } from "./secretFiles";

export const PUBLISH_USAGE = `Usage: farmhand-worker publish --url <deployment url> --name <app name> [options] <file.wasm>

Publishes a WebAssembly (WASI) module as a new version of a farm app; jobs of type app.<name> run it.

  --url <url>          Convex deployment URL (https://…convex.cloud; its HTTP address …convex.site is derived)
  --site-url <url>     The deployment's HTTP address, when it cannot be derived from --url
  --name <name>        The app's name: [a-z0-9][a-z0-9-]{0,63}
  --key <key>          A client key with the publish right (fh_c_…) or an operator key (fh_o_…); default
                       FARMHAND_KEY, then FARMHAND_OPERATOR_KEY from the environment, then the operator key file
                       (~/.config/farmhand/operator.json, mode 0600)
  --memory-mb <n>      The version's memory limit, ${APP_LIMITS.memoryMBMin}..${APP_LIMITS.memoryMBMax} MiB (default ${APP_LIMITS.memoryMBDefault})
  --timeout-ms <n>     The version's time limit per job (default ${APP_LIMITS.timeoutMsDefault}, at most ${APP_LIMITS.timeoutMsMax})
  --cache-ttl <ms>     The version's result-cache default: its jobs submitted without \`cache\` are cached this many
                       milliseconds, ${TIMING.cacheTtlMinMs}..${TIMING.defaultRetentionMs} (7 days); without it only jobs that ask are
  -h, --help           Show this help

Prints the published version as one JSON line: {"name","version","sha256"} (and "cacheTtlMs" when set). Publishing
the same bytes, limits and cache ttl as the latest version answers that version (no new one).`;

export type PublishOptions = {
  help: boolean;
  siteUrl: string;
  name: string;
  key: string;
  /** Where the key came from: given with --key, it shows in `ps` (a warning is printed). */
  keyFrom?: "argument" | "environment";
  file: string;
  memoryMB?: number;
  timeoutMs?: number;
  cacheTtlMs?: number;
};

/** Parse `publish`'s arguments; throws an Error with a user-facing message. */
export function parsePublishArgs(argv: string[], env: NodeJS.ProcessEnv): PublishOptions {
  const { values, positionals } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      help: { type: "boolean", short: "h" },
      url: { type: "string" },
      "site-url": { type: "string" },
      name: { type: "string" },
      key: { type: "string" },
      "memory-mb": { type: "string" },
      "timeout-ms": { type: "string" },
      "cache-ttl": { type: "string" },
    },
  });
  if (values.help) return { help: true, siteUrl: "", name: "", key: "", file: "" };
  if (!values.url && !values["site-url"]) throw new Error("--url is required (or --site-url)");
  for (const [flag, value] of [["--url", values.url], ["--site-url", values["site-url"]]] as const) {
    if (value !== undefined) checkHttpUrl(value, flag);
  }
  if (!values.name) throw new Error("--name is required");
  if (!APP_LIMITS.namePattern.test(values.name)) throw new Error(`--name must match [a-z0-9][a-z0-9-]{0,63}, got ${JSON.stringify(values.name)}`);
  const key = values.key ?? (env.FARMHAND_KEY?.trim() || env.FARMHAND_OPERATOR_KEY?.trim() || readSecretFile(secretFilePath("operator", env))?.key);
  if (!key) {
    throw new Error(
      `no key: pass --key, set FARMHAND_KEY to a client key with the publish right (fh_c_…) or FARMHAND_OPERATOR_KEY to an operator key (fh_o_…), or keep an operator key in ${secretFilePath("operator", env)}`,
    );
  }
  if (positionals.length !== 1) throw new Error(`give exactly one module file (got ${positionals.length})`);
  const whole = (flag: string, text: string | undefined, min: number, max: number) => (text === undefined ? undefined : wholeNumber(text, flag, min, max));
  return {
    help: false,
    siteUrl: siteUrlFor(values.url ?? values["site-url"]!, values["site-url"]),
    name: values.name,
    key,
    keyFrom: values.key ? "argument" : "environment",
    file: positionals[0],
    memoryMB: whole("--memory-mb", values["memory-mb"], APP_LIMITS.memoryMBMin, APP_LIMITS.memoryMBMax),
    timeoutMs: whole("--timeout-ms", values["timeout-ms"], APP_LIMITS.timeoutMsMin, APP_LIMITS.timeoutMsMax),
    cacheTtlMs: whole("--cache-ttl", values["cache-ttl"], TIMING.cacheTtlMinMs, TIMING.defaultRetentionMs),
  };
}

export type Published = { name: string; version: number; sha256: string; cacheTtlMs?: number };

/** Why publishing failed, with the exit code the CLI ends with. */
export class PublishError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export const PUBLISH_EXIT = { usage: 2, unreachable: 3, key: 4, refused: 1 } as const;

/** Upload the module; resolves with the version the server answered, or throws a PublishError saying why not. */
export async function publishApp(options: PublishOptions, doFetch: typeof fetch = fetch): Promise<Published> {
  let size: number;
  try {
    size = (await stat(options.file)).size;
  } catch (e) {
    throw new PublishError(`cannot read ${options.file}: ${(e as Error).message}`, PUBLISH_EXIT.usage);
  }
  if (size > APP_LIMITS.moduleBytesMax) {
    throw new PublishError(`${options.file} is ${size} bytes; a module may be at most ${APP_LIMITS.moduleBytesMax} bytes (20 MiB)`, PUBLISH_EXIT.refused);
  }
  const bytes = await readFile(options.file);
  const query = new URLSearchParams();
  if (options.memoryMB !== undefined) query.set("memoryMB", String(options.memoryMB));
  if (options.timeoutMs !== undefined) query.set("timeoutMs", String(options.timeoutMs));
  if (options.cacheTtlMs !== undefined) query.set("cacheTtlMs", String(options.cacheTtlMs));
  const url = `${options.siteUrl}/api/apps/${options.name}${query.size > 0 ? `?${query.toString()}` : ""}`;
  let response: Response;
  try {
    response = await doFetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${options.key}`, "content-type": "application/wasm" },
      body: bytes,
    });
  } catch (e) {
    throw new PublishError(`cannot reach ${options.siteUrl}: ${(e as Error).message} (is the URL right and the deployment up?)`, PUBLISH_EXIT.unreachable);
  }
  const body = await response.text();
  if (response.ok) {
    const parsed = parseJson(body) as Partial<Published> | undefined;
    if (typeof parsed?.version !== "number") throw new PublishError(`unexpected answer from ${url}: ${body.slice(0, 200)}`, PUBLISH_EXIT.refused);
    return parsed as Published;
  }
  throw refusal(response.status, errorOf(body), options);
}

function refusal(status: number, error: { code?: string; message?: string }, options: PublishOptions): PublishError {
  const detail = error.message ? `: ${error.message}` : "";
  switch (status) {
    case 401:
      return new PublishError(
        `the key was refused (${error.code ?? "bad_key"})${detail}; publishing needs a client key (fh_c_…) with the publish right or an operator key (fh_o_…) of the farm`,
        PUBLISH_EXIT.key,
      );
    case 403:
      return new PublishError(
        `this client key may not publish apps${detail}; an operator creates one with admin:createClientKey '{"orgId": …, "name": …, "canPublish": true}'`,
        PUBLISH_EXIT.key,
      );
    case 400:
      return new PublishError(`the farm refused ${options.file} (${error.code ?? "invalid_argument"})${detail}`, PUBLISH_EXIT.refused);
    case 413:
      return new PublishError(`${options.file} is too large${detail}; a module may be at most ${APP_LIMITS.moduleBytesMax} bytes (20 MiB)`, PUBLISH_EXIT.refused);
    case 404:
      return new PublishError(`no app routes at ${options.siteUrl} (HTTP 404)${detail}; is --site-url the deployment's HTTP address (…convex.site)?`, PUBLISH_EXIT.usage);
    default:
      return new PublishError(`publishing failed: HTTP ${status}${detail}`, PUBLISH_EXIT.refused);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorOf(body: string): { code?: string; message?: string } {
  const error = (parseJson(body) as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  return {
    code: typeof error?.code === "string" ? error.code : undefined,
    message: typeof error?.message === "string" ? error.message.slice(0, 500) : undefined,
  };
}
