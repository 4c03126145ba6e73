import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { FarmhandClient, type JobOutcome, type JobSpec } from "../sdk/client";
import { errorCode, errorMessage } from "../worker/errors";
import { checkHttpUrl } from "./flagValues";
import { readSecretFile, secretFilePath } from "./secretFiles";

/** `farmhand submit | wait | status`: a submitter's commands over farmhand/client. Exit codes: 0 all succeeded, 1 some failed, 2 usage. */
export const SUBMITTER_EXIT = { ok: 0, failed: 1, usage: 2 } as const;
/** What the server answers a job spec it will not take: exit 2, the command was wrong (not the farm). */
const SPEC_REFUSALS = new Set(["invalid_argument", "too_large", "idempotency_mismatch"]);

export const SUBMITTER_USAGE = `Usage: farmhand submit --type <T> [--payload <JSON> | --payloads <file.jsonl>] [--batch <ID>]
                       [--depends-on <ID,…> | --after-batch <ID>] [--fairness-key <K>] [--external-id <ID>] [--wait]
       farmhand wait <jobId…> | --batch <ID>
       farmhand status <jobId>

  submit        Submit one job (--payload, default null) or one per line of a JSON Lines file (--payloads; - reads
                stdin), in chunks under the batch caps. Prints the job ids, one a line; with --wait, one JSON line per
                job as it ends ({"jobId","status","result"} or {"jobId","status","code","error"}) and a progress bar
                on stderr when it is a terminal. --fairness-key: whom the jobs are shared with inside the client
                key (an end user, a tenant; at most 64 bytes): the farm takes turns between them.
                --external-id: an idempotency key; submitting again answers with the same job (with --payloads
                the n-th payload's key is <ID>:<n>, so re-running the same file makes no new jobs).
  wait          Wait for these jobs, or every job of a batch, to end; prints one JSON line per job as it ends.
  status        Print a job as JSON (status, progress, result, error, output).

  --url <url>   The deployment (https://…convex.cloud); default FARMHAND_URL, then the client key file's url
  Client key:   FARMHAND_CLIENT_KEY, else the client key file (~/.config/farmhand/client.json, mode 0600)
  TRACEPARENT   a W3C trace context in the environment: submitted with each job, whose runs are its child spans
  Exit codes:   0 every job succeeded (status: the job exists and has not failed), 1 some failed, 2 usage (a bad
                flag, or a job the farm refuses: invalid fields, too large, an external id already used for another spec)`;

export type SubmitterIo = {
  env: NodeJS.ProcessEnv;
  out(line: string): void;
  err(line: string): void;
  /** Redraw the progress line (stderr); only when stderr is a terminal. */
  progress?(text: string): void;
  readStdin?(): Promise<string>;
};

export class UsageError extends Error {}

/**
 * What a failed `farmhand submit|wait|status|schedule` says and exits with: a bad flag is a usage error (2) with a
 * pointer to the help; otherwise the server's own words, and 2 for a spec it refuses, 1 for the rest.
 */
export function reportFailure(e: unknown, label: string, help: string, io: Pick<SubmitterIo, "err">): number {
  if (e instanceof UsageError || (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    io.err(`${label}: ${(e as Error).message}\nRun ${help} for usage.`);
    return SUBMITTER_EXIT.usage;
  }
  io.err(`${label}: ${errorMessage(e)}`);
  return SPEC_REFUSALS.has(errorCode(e) ?? "") ? SUBMITTER_EXIT.usage : SUBMITTER_EXIT.failed;
}

export type Connection = { url: string; clientKey: string };

/** The deployment and client key: --url, FARMHAND_URL or the key file; FARMHAND_CLIENT_KEY or the key file. */
export function connectionOf(url: string | undefined, env: NodeJS.ProcessEnv): Connection {
  let stored: { url: string; key: string } | undefined;
  const fromEnv = env.FARMHAND_CLIENT_KEY;
  if (!fromEnv || !(url ?? env.FARMHAND_URL)) stored = readSecretFile(secretFilePath("client", env));
  const clientKey = fromEnv || stored?.key;
  const where = url ?? env.FARMHAND_URL ?? stored?.url;
  if (!clientKey) throw new UsageError(`no client key: set FARMHAND_CLIENT_KEY or keep one in ${secretFilePath("client", env)}`);
  if (!where) throw new UsageError("no deployment: give --url, set FARMHAND_URL, or keep a url in the client key file");
  checkHttpUrl(where, "--url");
  return { url: where, clientKey };
}

/** Run `farmhand <command> …` for submit, wait and status; resolves with the exit code. */
export async function runSubmitter(command: "submit" | "wait" | "status", argv: string[], io: SubmitterIo): Promise<number> {
  let client: FarmhandClient | undefined;
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        url: { type: "string" },
        type: { type: "string" },
        payload: { type: "string" },
        payloads: { type: "string" },
        batch: { type: "string" },
        "depends-on": { type: "string" },
        "after-batch": { type: "string" },
        "fairness-key": { type: "string" },
        "external-id": { type: "string" },
        wait: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
    if (values.help) {
      io.out(SUBMITTER_USAGE);
      return SUBMITTER_EXIT.ok;
    }
    const plan = await planOf(command, values, positionals, io);
    client = new FarmhandClient({ ...connectionOf(values.url, io.env), log: false });
    return await plan(client);
  } catch (e) {
    return reportFailure(e, `farmhand ${command}`, "farmhand --help", io);
  } finally {
    await client?.close();
  }
}

type Values = {
  type?: string;
  payload?: string;
  payloads?: string;
  batch?: string;
  "depends-on"?: string;
  "after-batch"?: string;
  "fairness-key"?: string;
  "external-id"?: string;
  wait?: boolean;
};
type Plan = (client: FarmhandClient) => Promise<number>;

async function planOf(command: "submit" | "wait" | "status", values: Values, positionals: string[], io: SubmitterIo): Promise<Plan> {
  if (command === "status") {
    if (positionals.length !== 1) throw new UsageError("status takes one job id");
    const jobId = positionals[0];
    return async (client) => {
      const job = await client.get(jobId);
      if (!job) {
        io.err(`farmhand status: no job ${jobId}`);
        return SUBMITTER_EXIT.failed;
      }
      io.out(JSON.stringify(job));
      // why it waits, for the person at the terminal (the JSON line holds it too: waitCode, waitReason)
      if (job.waitReason) io.err(`${job.status} (${job.waitCode}): ${job.waitReason}`);
      return job.status === "dead" || job.status === "canceled" ? SUBMITTER_EXIT.failed : SUBMITTER_EXIT.ok;
    };
  }
  if (command === "wait") {
    if ((positionals.length > 0) === (values.batch !== undefined)) throw new UsageError("wait takes job ids or --batch <ID>");
    return async (client) => {
      const ids = values.batch !== undefined ? await batchJobIds(client, values.batch) : positionals;
      return await waitFor(client, ids, io);
    };
  }
  if (positionals.length > 0) throw new UsageError(`submit takes no positional arguments (got ${positionals[0]})`);
  if (!values.type) throw new UsageError("submit needs --type <T>");
  if (values.payload !== undefined && values.payloads !== undefined) throw new UsageError("give --payload or --payloads, not both");
  if (values["depends-on"] !== undefined && values["after-batch"] !== undefined) throw new UsageError("give --depends-on or --after-batch, not both");
  const payloads = values.payloads !== undefined ? parseJsonLines(values.payloads === "-" ? await io.readStdin!() : await readFile(values.payloads, "utf8"), values.payloads) : [parseJson(values.payload ?? "null", "--payload")];
  const parents = values["depends-on"]?.split(",").map((id) => id.trim()).filter(Boolean);
  if (parents !== undefined && parents.length === 0) throw new UsageError("--depends-on needs job ids, comma-separated");
  const dependsOn = parents ? { jobs: parents } : values["after-batch"] !== undefined ? { batch: values["after-batch"] } : undefined;
  // the caller's span (a CI step, a script run under a tracer): each job's runs are traced as its children
  const traceparent = io.env.TRACEPARENT?.trim() || undefined;
  const specs = submitSpecs(values, payloads, { dependsOn, traceparent, many: values.payloads !== undefined });
  return async (client) => {
    const ids = await client.submitMany(specs);
    if (!values.wait) {
      for (const id of ids) io.out(id);
      return SUBMITTER_EXIT.ok;
    }
    return await waitFor(client, ids, io);
  };
}

/** The job specs of `farmhand submit`: one per payload; with --payloads and --external-id the n-th key is `<ID>:<n>`. */
export function submitSpecs(
  values: Values,
  payloads: unknown[],
  extra: { dependsOn?: JobSpec["dependsOn"]; traceparent?: string; many: boolean },
): JobSpec[] {
  const externalId = values["external-id"];
  if (externalId !== undefined && externalId.trim() === "") throw new UsageError("--external-id needs an id");
  return payloads.map((payload, i) => ({
    type: values.type!,
    payload,
    ...(externalId !== undefined ? { externalId: extra.many ? `${externalId}:${i + 1}` : externalId } : {}),
    ...(values.batch !== undefined ? { batchId: values.batch } : {}),
    ...(extra.dependsOn ? { dependsOn: extra.dependsOn } : {}),
    ...(values["fairness-key"] !== undefined ? { fairnessKey: values["fairness-key"] } : {}),
    ...(extra.traceparent ? { traceparent: extra.traceparent } : {}),
  }));
}

/** One JSON line per job as it ends; a progress bar on a terminal's stderr. */
async function waitFor(client: FarmhandClient, ids: readonly string[], io: SubmitterIo): Promise<number> {
  let ended = 0;
  let failed = 0;
  io.progress?.(progressBar(0, ids.length));
  for await (const outcome of client.results(ids)) {
    ended++;
    if (outcome.status !== "succeeded") failed++;
    io.out(JSON.stringify(lineOf(outcome)));
    io.progress?.(progressBar(ended, ids.length, failed));
  }
  if (io.progress) io.err("");
  return failed > 0 ? SUBMITTER_EXIT.failed : SUBMITTER_EXIT.ok;
}

function lineOf(outcome: JobOutcome) {
  return outcome.status === "succeeded"
    ? { jobId: outcome.jobId, status: outcome.status, result: outcome.result }
    : { jobId: outcome.jobId, status: outcome.error.status, code: outcome.error.code, error: outcome.error.message };
}

export function progressBar(done: number, total: number, failed = 0, width = 30): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `[${"#".repeat(filled)}${" ".repeat(width - filled)}] ${done}/${total}${failed > 0 ? ` (${failed} failed)` : ""}`;
}

async function batchJobIds(client: FarmhandClient, batchId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const id of client.batchJobIds(batchId)) ids.push(id);
  if (ids.length === 0) throw new Error(`batch ${JSON.stringify(batchId)} has no jobs`);
  return ids;
}

export function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new UsageError(`${where} is not JSON: ${(e as Error).message}`);
  }
}

/** One JSON value per non-blank line. */
function parseJsonLines(text: string, file: string): unknown[] {
  const values: unknown[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    values.push(parseJson(line, `${file} line ${i + 1}`));
  }
  if (values.length === 0) throw new UsageError(`${file} holds no JSON lines`);
  return values;
}
