import { createHash } from "node:crypto";
import { hostname, userInfo } from "node:os";
import { ConvexClient } from "convex/browser";
import { api } from "../../convex/_generated/api";
import { APPS_CAPABILITY } from "../../convex/contract";
import { AppsRuntime, createBuiltinRegistry, loadRecipesFile, probeOllama, type Recipe } from "../handlers";
import { ensurePrivateDir, userStateDir } from "../policy/privateFiles";
import { convexFarmClient } from "../worker/farmClient";
import { describeError } from "../worker/errors";
import { jobLabel } from "../worker/jobLabel";
import { measureFacts } from "../worker/machineFacts";
import { energyGauge } from "../worker/energy";
import { DEFAULT_WATTS_PER_CORE } from "../policy/donorSettings";
import { Worker } from "../worker/worker";
import { defaultIdleSources, MachineIdle } from "../policy/idle/machineIdle";
import { workWhileAway } from "../policy/idle/workWhileAway";
import { PauseVotes } from "../policy/pauseVotes";
import { pauseWhileRunning } from "../policy/programPause";
import { GpuGuard } from "../policy/gpuGuard";
import { notConvexMessage, probeDeployment } from "../worker/deploymentProbe";
import { parseCliArgs, USAGE, type CliOptions } from "./args";
import { drainingLine } from "./drainText";
import { forgetKeys } from "./forgetKeys";
import { readKeyFile, writeKeyFile } from "./keyFile";
import { parsePublishArgs, publishApp, PublishError, PUBLISH_EXIT, PUBLISH_USAGE } from "./publish";
import { tracesEndpoint, workerTracer } from "../tracing/loadTracer";

const EXIT = { ok: 0, usage: 2, unreachable: 3, key: 4, failed: 1 } as const;

export type CliIo = {
  env: NodeJS.ProcessEnv;
  out(line: string): void;
  err(line: string): void;
  /** Subscribe to a signal; returns an unsubscribe. */
  onSignal(signal: "SIGINT" | "SIGTERM" | "SIGUSR1" | "SIGUSR2", listener: () => void): () => void;
};

export const processIo: CliIo = {
  env: process.env,
  out: (line) => process.stdout.write(line + "\n"),
  err: (line) => process.stderr.write(line + "\n"),
  onSignal(signal, listener) {
    process.on(signal, listener);
    return () => process.off(signal, listener);
  },
};

class CliError extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
  }
}

/** The headless worker. Resolves with the process exit code. */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  if (argv[0] === "publish") return await runPublish(argv.slice(1), io);
  let options: CliOptions;
  try {
    options = parseCliArgs(argv, io.env);
  } catch (e) {
    io.err(`farmhand-worker: ${(e as Error).message}\nRun farmhand-worker --help for usage.`);
    return EXIT.usage;
  } finally {
    forgetKeys(io.env);
  }
  if (options.help) {
    io.out(USAGE);
    return EXIT.ok;
  }
  // An operator key in the environment is for the operator commands: the jobs this worker runs never inherit it.
  delete io.env.FARMHAND_OPERATOR_KEY;
  if (options.keyFrom === "argument") {
    io.err("farmhand-worker: warning: a key given with --key is visible to every user of this machine (ps); set FARMHAND_KEY or use --key-file instead");
  }
  try {
    // The key file and the module cache live here: this user's only (0700), never a symlink (as the extension's).
    ensurePrivateDir(userStateDir(io.env));
  } catch (e) {
    io.err(`farmhand-worker: ${(e as Error).message}`);
    return EXIT.failed;
  }
  const log = (line: string) => io.out(`${new Date().toISOString()} ${line}`);
  let recipes: Recipe[] = [];
  try {
    if (options.recipes) recipes = loadRecipesFile(options.recipes);
  } catch (e) {
    io.err(`farmhand-worker: ${(e as Error).message}`);
    return EXIT.usage;
  }

  // The Convex client would crash on a server that answers its websocket with something else (a web page, another
  // app): ask over HTTP first. A URL that does not answer at all is left to the connection timeout below.
  if ((await probeDeployment(options.url, options.connectTimeoutMs)) === "notConvex") {
    io.err(`farmhand-worker: ${notConvexMessage(options.url)}`);
    return EXIT.usage;
  }
  const { registry, pool } = createBuiltinRegistry({
    recipes,
    ollama: options.ollama ? { url: options.ollamaUrl } : false,
    pool: { maxIdle: options.concurrency },
  });
  const client = new ConvexClient(options.url, { logger: false, skipConvexDeploymentUrlCheck: true, unsavedChangesWarning: false });
  try {
    await waitForConnection(client, options);
    const offered = [...(await registry.capabilities()), ...(options.apps ? [APPS_CAPABILITY] : [])];
    const apiKey = await credentials(client, options, offered, log);
    if (options.apps) {
      // The donor allowed apps: only now is the `apps` capability offered, with the key that downloads modules.
      registry.register(new AppsRuntime(pool, { stateDir: userStateDir(io.env) }).handlerFor({ deploymentUrl: options.url, siteUrl: options.siteUrl, apiKey }));
      log("apps: allowed (WebAssembly apps run sandboxed: no files, network or environment of this machine)");
    }
    if (options.ollama) {
      const probe = await probeOllama(options.ollamaUrl);
      log(probe.running ? `ollama: ${probe.models.length} local model(s)` : `ollama: not offered (${probe.error})`);
    }
    return await work(client, apiKey, options, registry, log, io);
  } catch (e) {
    io.err(`farmhand-worker: ${(e as Error).message}`);
    return e instanceof CliError ? e.exitCode : EXIT.failed;
  } finally {
    pool.close();
    await client.close();
  }
}

async function waitForConnection(client: ConvexClient, options: CliOptions): Promise<void> {
  if (client.connectionState().isWebSocketConnected) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      reject(
        new CliError(
          `cannot reach ${options.url}: no connection after ${options.connectTimeoutMs} ms (is the URL right and the deployment up?)`,
          EXIT.unreachable,
        ),
      );
    }, options.connectTimeoutMs);
    const unsubscribe = client.subscribeToConnectionState((s) => {
      if (!s.isWebSocketConnected) return;
      clearTimeout(timer);
      unsubscribe();
      resolve();
    });
  });
}

/** The worker key: --key or FARMHAND_KEY, else enroll with --token (saving the key), else the key file. */
async function credentials(client: ConvexClient, options: CliOptions, capabilities: string[], log: (l: string) => void): Promise<string> {
  if (options.key) return options.key;
  if (options.token) {
    const advertised = options.capabilities ? capabilities.filter((c) => options.capabilities!.includes(c)) : capabilities;
    let enrolled: { workerId: string; apiKey: string };
    try {
      enrolled = await client.mutation(api.workers.enroll, {
        token: options.token,
        name: options.name!,
        machineId: machineId(),
        capabilities: advertised,
        facts: await measureFacts(),
      });
    } catch (e) {
      const { kind, code, message } = describeError(e);
      throw new CliError(`enrollment failed (${code ?? kind}): ${message}`, kind === "unreachable" ? EXIT.unreachable : EXIT.key);
    }
    writeKeyFile(options.keyFile, { url: options.url, apiKey: enrolled.apiKey, workerId: enrolled.workerId, name: options.name! });
    log(`enrolled as "${options.name}" (${enrolled.workerId}); key saved to ${options.keyFile}`);
    return enrolled.apiKey;
  }
  const stored = readKeyFile(options.keyFile);
  if (!stored) throw new CliError(`no worker key: pass --key, or --token and --name to enroll, or set FARMHAND_KEY (no key file at ${options.keyFile})`, EXIT.usage);
  if (stored.url.replace(/\/+$/, "") !== options.url) {
    throw new CliError(`the key in ${options.keyFile} is for ${stored.url}, not ${options.url}; enroll again with --token`, EXIT.usage);
  }
  return stored.apiKey;
}

async function work(
  client: ConvexClient,
  apiKey: string,
  options: CliOptions,
  registry: ReturnType<typeof createBuiltinRegistry>["registry"],
  log: (l: string) => void,
  io: CliIo,
): Promise<number> {
  // OpenTelemetry's variables (OTEL_EXPORTER_OTLP_ENDPOINT…): a span per run, its SDK loaded only then
  const traces = tracesEndpoint(io.env);
  const tracer = traces ? await workerTracer({ url: traces, serviceName: io.env.OTEL_SERVICE_NAME?.trim() || "farmhand-worker", client, apiKey }) : undefined;
  if (traces) log(`traces: a span per run to ${traces}`);
  // each job's energy, reported with its end: measured where the CPU's package counter is readable, else estimated
  const energy = await energyGauge({ wattsPerCore: () => DEFAULT_WATTS_PER_CORE });
  log(energy.method === "measured" ? `energy: measured by ${energy.source}` : `energy: ${energy.source} (the CPU's energy counter cannot be read here)`);
  const worker = new Worker({
    tracer,
    client: convexFarmClient(client, apiKey),
    handlers: registry,
    concurrency: options.concurrency,
    // --capabilities narrows the handlers' capabilities; --apps adds apps to whatever it names
    onlyCapabilities: options.capabilities && options.apps ? [...new Set([...options.capabilities, APPS_CAPABILITY])] : options.capabilities,
    jobTimeoutMs: options.jobTimeoutMs,
    suspendLimitMs: options.suspendLimitMs,
    measureFacts: () => measureFacts(),
    // 0 means never auto-pause (a fleet worker whose failures are expected, e.g. a test farm).
    maxConsecutiveFailures: options.maxConsecutiveFailures === 0 ? Number.POSITIVE_INFINITY : options.maxConsecutiveFailures,
    energy,
  });
  worker.on("state", (e) => {
    log(`worker ${e.state}${e.reason ? `: ${e.reason}` : ""}`);
  });
  worker.on("jobStarted", (e) => log(`job ${e.jobId} ${jobLabel(e.type, e.app)} started (attempt ${e.attempt})`));
  worker.on("jobFinished", (e) => {
    log(`job ${e.jobId} ${jobLabel(e.type, e.app)} ${e.outcome} in ${e.durationMs} ms${e.error ? `: ${e.error}` : ""}`);
  });
  worker.on("error", (e) => log(`error: ${e.message}`));
  worker.on("connection", (e) => log(e.connected ? "connected" : "connection lost; reconnecting"));

  let interrupts = 0;
  const onInterrupt = () => {
    interrupts++;
    if (interrupts === 1) {
      log(drainingLine(worker.snapshot().running.length));
      void worker.drain();
    } else {
      log("stopping now: giving running jobs back");
      void worker.stop({ kind: "user", detail: "interrupted" });
    }
  };
  const offInt = io.onSignal("SIGINT", onInterrupt);
  const offTerm = io.onSignal("SIGTERM", () => void worker.stop({ kind: "user", detail: "terminated" }));
  // Each reason to pause (a signal, --when-idle, --pause-while-running) votes; the worker runs while none holds it.
  const votes = new PauseVotes(worker);
  const signalled = votes.voter("signal");
  // Windows has neither signal; there the jobs could not be frozen anyway.
  const offSuspend =
    process.platform === "win32"
      ? () => undefined
      : io.onSignal("SIGUSR1", () => {
          log("suspending: freezing running jobs, taking nothing new (SIGUSR2 resumes)");
          signalled.pause("suspended (SIGUSR1)", { suspend: true });
        });
  const offResume = process.platform === "win32" ? () => undefined : io.onSignal("SIGUSR2", () => signalled.resume());
  const stopped = new Promise<void>((resolve) => worker.on("state", (e) => e.state === "stopped" && resolve()));
  const starting = worker.start();
  // --when-idle: held from the start (start takes the running state at once) until the machine is idle.
  const idle = options.whenIdleMs === undefined ? undefined : new MachineIdle(defaultIdleSources(), (source) => source && log(`idle is read from ${source}`));
  const follow = idle && workWhileAway(votes.voter("idle"), idle, options.whenIdleMs!, log);
  const programs = options.pauseWhileRunning && pauseWhileRunning(votes.voter("programs"), options.pauseWhileRunning, log);
  const gpu = new GpuGuard(worker, log);
  gpu.start();
  try {
    await starting;
    log(`working on ${options.url} with ${options.concurrency} slot(s); capabilities: ${worker.snapshot().capabilities.join(", ")}`);
    if (worker.state !== "stopped") await stopped;
  } finally {
    follow?.dispose();
    programs?.dispose();
    idle?.dispose();
    energy.dispose();
    gpu.dispose();
    await tracer?.close();
    offInt();
    offTerm();
    offSuspend();
    offResume();
  }
  return worker.snapshot().stop?.kind === "keyRefused" ? EXIT.key : EXIT.ok;
}

/** `farmhand-worker publish …`: upload a module as a new app version; prints the version as one JSON line. */
async function runPublish(argv: string[], io: CliIo): Promise<number> {
  let options;
  try {
    options = parsePublishArgs(argv, io.env);
  } catch (e) {
    io.err(`farmhand-worker publish: ${(e as Error).message}\nRun farmhand-worker publish --help for usage.`);
    return PUBLISH_EXIT.usage;
  } finally {
    forgetKeys(io.env);
  }
  if (options.help) {
    io.out(PUBLISH_USAGE);
    return EXIT.ok;
  }
  if (options.keyFrom === "argument") {
    io.err("farmhand-worker publish: warning: a key given with --key is visible to every user of this machine (ps); set FARMHAND_KEY instead");
  }
  try {
    io.out(JSON.stringify(await publishApp(options)));
    return EXIT.ok;
  } catch (e) {
    io.err(`farmhand-worker publish: ${(e as Error).message}`);
    return e instanceof PublishError ? e.exitCode : EXIT.failed;
  }
}

/** A stable, non-identifying id for this machine and user. */
function machineId(): string {
  return createHash("sha256").update(`${hostname()}/${userInfo().username}`).digest("hex").slice(0, 16);
}
