import { join } from "node:path";
import { parseArgs } from "node:util";
import { parsePrograms } from "../policy/donorSettings";
import { userStateDir } from "../policy/privateFiles";
import { MAX_CONCURRENCY } from "../worker/worker";
import { checkHttpUrl, wholeNumber } from "./flagValues";

export type CliOptions = {
  help: boolean;
  url: string;
  key?: string;
  /** Where the key came from: `--key` shows it to every user of the machine in `ps`; FARMHAND_KEY does not. */
  keyFrom?: "argument" | "environment";
  token?: string;
  name?: string;
  keyFile: string;
  concurrency: number;
  capabilities?: string[];
  recipes?: string;
  ollamaUrl?: string;
  ollama: boolean;
  /** The donor allows farm apps: offer the `apps` capability and run app jobs in the WASI sandbox. */
  apps: boolean;
  /** The deployment's HTTP address, where app modules are downloaded (derived from the URL by default). */
  siteUrl?: string;
  jobTimeoutMs?: number;
  /** Auto-pause after this many failed jobs in a row (0: never). */
  maxConsecutiveFailures?: number;
  connectTimeoutMs: number;
  /** A job frozen (SIGUSR1) longer than this is given back to the queue. */
  suspendLimitMs?: number;
  /** --when-idle: work only after this long without input anywhere on the machine (machine-wide idle sources). */
  whenIdleMs?: number;
  /** --pause-while-running: freeze running jobs and take nothing while one of these programs runs. */
  pauseWhileRunning?: string[];
};

/** --when-idle without minutes: the medium preset's wait. */
const DEFAULT_WHEN_IDLE_MINUTES = 5;

export const USAGE = `Usage: farmhand-worker --url <deployment url> [--key <worker key> | --token <enrollment token> --name <name>] [options]
       farmhand-worker publish --url <deployment url> --name <app name> <file.wasm>   (publish --help for more)

Pulls jobs from a Farmhand queue and runs them on this machine, without VS Code.

  --url <url>              Convex deployment URL (https://…convex.cloud, or http://127.0.0.1:PORT locally)
  --key <key>              Worker key (fh_w_…); visible to other users in \`ps\`: prefer FARMHAND_KEY or the key file
                           (without either, FARMHAND_KEY from the environment, then the key file)
  --token <token>          Enrollment token (fh_e_…): enroll once, save the key in the key file
  --name <name>            This worker's name (needed with --token)
  --key-file <path>        Where the key is kept (default ~/.config/farmhand/worker.json, mode 0600)
  --concurrency <n>        Jobs at a time, 1..${MAX_CONCURRENCY} (default 1)
  --capabilities <a,b>     Advertise only these of the handlers' capabilities
  --recipes <file>         JSON file of named commands this machine offers as recipe.<name> jobs
  --ollama-url <url>       Local Ollama (default http://127.0.0.1:11434)
  --no-ollama              Do not offer the Ollama handlers
  --apps                   Run farm apps: WebAssembly programs the farm's operators publish, in a sandbox with no
                           access to this machine's files, network, environment or other programs (off by default)
  --site-url <url>         The deployment's HTTP address for app downloads (default: derived from --url)
  --job-timeout-ms <ms>    Longest a job may run before it is stopped and failed (default 30 min)
  --max-failures <n>       Pause after n jobs failed in a row (default 5; 0 never pauses)
  --connect-timeout-ms <ms> Give up when the URL cannot be reached for this long (default 15000)
  --suspend-limit-minutes <n> Give back a job frozen longer than this (default 10)
  --when-idle [minutes]    Work only after this many minutes without keyboard or mouse input on this machine (default
                           ${DEFAULT_WHEN_IDLE_MINUTES}; a locked screen counts as away); input freezes running jobs at once. Read
                           machine-wide like the extension does (GNOME, KDE, X11, logind; Windows; macOS)
  --pause-while-running <a,b> Freeze running jobs and take nothing new while one of these programs runs (names as
                           a process list shows them, case-insensitive, e.g. steam,obs,zoom); looked for every 10 s
  -h, --help               Show this help

Ctrl-C once: finish running jobs, then exit. Twice: stop now and give the running jobs back.
SIGUSR1: take nothing new and freeze the running jobs (SIGSTOP to their process groups); SIGUSR2: thaw them and
take work again (for a script that knows when this machine's owner needs it).
OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT): export one OpenTelemetry span per run over
OTLP/HTTP, a child of the trace the job was submitted in (its traceparent); OTEL_SERVICE_NAME names the service.`;

export function defaultKeyFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(userStateDir(env), "worker.json");
}

/** Parse and check the command line; throws an Error with a user-facing message. */
export function parseCliArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): CliOptions {
  const { values } = parseArgs({
    args: withWhenIdleMinutes(argv),
    strict: true,
    allowPositionals: false,
    options: {
      help: { type: "boolean", short: "h" },
      url: { type: "string" },
      key: { type: "string" },
      token: { type: "string" },
      name: { type: "string" },
      "key-file": { type: "string" },
      concurrency: { type: "string" },
      capabilities: { type: "string" },
      recipes: { type: "string" },
      "ollama-url": { type: "string" },
      "no-ollama": { type: "boolean" },
      apps: { type: "boolean" },
      "site-url": { type: "string" },
      "job-timeout-ms": { type: "string" },
      "max-failures": { type: "string" },
      "connect-timeout-ms": { type: "string" },
      "suspend-limit-minutes": { type: "string" },
      "when-idle": { type: "string" },
      "pause-while-running": { type: "string" },
    },
  });
  const keyFile = values["key-file"] ?? defaultKeyFile(env);
  if (values.help) return { help: true, url: "", keyFile, concurrency: 1, ollama: true, apps: false, connectTimeoutMs: 15_000 };
  if (!values.url) throw new Error("--url is required");
  checkHttpUrl(values.url, "--url");
  if (values.key && values.token) throw new Error("give --key or --token, not both");
  // The environment's key is the default key; an explicit --token enrolls instead.
  const envKey = values.token ? undefined : env.FARMHAND_KEY?.trim() || undefined;
  if (values.token && !values.name) throw new Error("--token needs --name (how this worker shows up in the farm)");
  if (values["ollama-url"]) checkHttpUrl(values["ollama-url"], "--ollama-url");
  if (values["site-url"]) checkHttpUrl(values["site-url"], "--site-url");
  if (values["site-url"] && !values.apps) throw new Error("--site-url is only for --apps (where app modules are downloaded)");
  const capabilities = values.capabilities
    ?.split(",")
    .map((c) => c.trim())
    .filter(Boolean);
  if (values.capabilities !== undefined && !capabilities?.length) throw new Error("--capabilities needs at least one name");
  const programs = values["pause-while-running"] === undefined ? undefined : parsePrograms(values["pause-while-running"].split(","), "--pause-while-running");
  if (programs?.errors.length) throw new Error(programs.errors[0]);
  if (programs && programs.programs.length === 0) throw new Error("--pause-while-running needs at least one program name");
  return {
    help: false,
    url: values.url.replace(/\/+$/, ""),
    key: values.key ?? envKey,
    keyFrom: values.key ? "argument" : envKey ? "environment" : undefined,
    token: values.token,
    name: values.name,
    keyFile,
    concurrency: wholeNumber(values.concurrency ?? "1", "--concurrency", 1, MAX_CONCURRENCY),
    capabilities,
    recipes: values.recipes,
    ollamaUrl: values["ollama-url"],
    ollama: !values["no-ollama"],
    apps: values.apps === true,
    siteUrl: values["site-url"],
    jobTimeoutMs: values["job-timeout-ms"] ? wholeNumber(values["job-timeout-ms"], "--job-timeout-ms", 1_000, 7 * 24 * 3_600_000) : undefined,
    maxConsecutiveFailures: values["max-failures"] ? wholeNumber(values["max-failures"], "--max-failures", 0, 1_000_000) : undefined,
    connectTimeoutMs: wholeNumber(values["connect-timeout-ms"] ?? "15000", "--connect-timeout-ms", 100, 3_600_000),
    suspendLimitMs: values["suspend-limit-minutes"] ? wholeNumber(values["suspend-limit-minutes"], "--suspend-limit-minutes", 0, 1_440) * 60_000 : undefined,
    whenIdleMs: values["when-idle"] !== undefined ? wholeNumber(values["when-idle"], "--when-idle", 0, 1_440) * 60_000 : undefined,
    pauseWhileRunning: programs?.programs,
  };
}

/** `--when-idle` takes its minutes optionally: alone (or before another flag), it means the default. */
function withWhenIdleMinutes(argv: string[]): string[] {
  return argv.flatMap((arg, i) => (arg === "--when-idle" && !/^\d/.test(argv[i + 1] ?? "") ? [`--when-idle=${DEFAULT_WHEN_IDLE_MINUTES}`] : [arg]));
}
