// Starts one code-server on a free loopback port with its own user-data, extensions and config, and stops it with
// its whole process group (the extension host and its children are forked by code-server).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { codeServerEntry } from "./paths.mjs";
import { forEachLine, spawnProcessGroup } from "./process.mjs";

/** Settings every test window gets: nothing that phones home, nothing that opens on its own. */
const QUIET_SETTINGS = {
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "extensions.ignoreRecommendations": true,
  "workbench.startupEditor": "none",
  "workbench.enableExperiments": false,
  "workbench.tips.enabled": false,
  "security.workspace.trust.enabled": false,
  "chat.commandCenter.enabled": false,
  "git.enabled": false,
};

/** Throws with a clear message when `npm run harness:install` has not been run. */
export function requireInstalledCodeServer() {
  if (!existsSync(codeServerEntry)) {
    throw new Error("code-server is not installed: run `npm run harness:install` first");
  }
}

/**
 * Layout of one throw-away code-server profile under `root`. `settings` are written as user settings and, because
 * machine-scoped settings in a remote window come from the remote side, as the server's machine settings too.
 * `machineOnly` goes to the machine settings alone (the Remote tab): a machine-scoped setting written in both places
 * could not be changed from the Remote tab (removing the Remote entry leaves the User one in force).
 */
export function prepareProfile(root, settings = {}, machineOnly = {}) {
  const profile = {
    root,
    userDataDir: join(root, "user-data"),
    extensionsDir: join(root, "extensions"),
    workspaceDir: join(root, "workspace"),
    chromiumDir: join(root, "chromium"),
    tmpDir: join(root, "tmp"),
    configFile: join(root, "config.yaml"),
  };
  const allSettings = JSON.stringify({ ...QUIET_SETTINGS, ...settings }, null, 2);
  for (const dir of [profile.extensionsDir, profile.workspaceDir, profile.tmpDir, join(profile.userDataDir, "User"), join(profile.userDataDir, "Machine")]) {
    mkdirSync(dir, { recursive: true });
  }
  writeFileSync(join(profile.userDataDir, "User", "settings.json"), allSettings);
  writeFileSync(join(profile.userDataDir, "Machine", "settings.json"), JSON.stringify({ ...QUIET_SETTINGS, ...settings, ...machineOnly }, null, 2));
  writeFileSync(profile.configFile, "auth: none\n");
  return profile;
}

function baseArgs(profile) {
  return [
    codeServerEntry,
    "--config", profile.configFile,
    "--user-data-dir", profile.userDataDir,
    "--extensions-dir", profile.extensionsDir,
  ];
}

/** `installExtension`, without blocking this process: resolves with its output. */
export function installExtensionAsync(profile, vsixPath) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...baseArgs(profile), "--force", "--install-extension", vsixPath], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill(), 60_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0 && /was successfully installed/.test(output)) resolve(output);
      else reject(new Error(`installing ${vsixPath} into code-server failed (exit ${code}):\n${output}`));
    });
  });
}

/** `code-server --install-extension <vsix>` into the profile's extensions dir; returns its output. */
export function installExtension(profile, vsixPath) {
  const result = spawnSync(process.execPath, [...baseArgs(profile), "--force", "--install-extension", vsixPath], {
    encoding: "utf8",
    timeout: 60_000,
  });
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0 || !/was successfully installed/.test(output)) {
    throw new Error(`installing ${vsixPath} into code-server failed (exit ${result.status}):\n${output}`);
  }
  return output;
}

/**
 * Starts code-server and resolves once it serves `/healthz`. `env` is added to this process's environment and so
 * reaches the extension host. `onLog` gets every line code-server prints.
 */
export async function startCodeServer(profile, { env = {}, onLog = () => {}, timeoutMs = 30_000 } = {}) {
  const { child, stop } = spawnProcessGroup(
    process.execPath,
    [
      ...baseArgs(profile),
      "--auth", "none",
      "--bind-addr", "127.0.0.1:0",
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      "--ignore-last-opened",
      profile.workspaceDir,
    ],
    {
      env: {
        ...process.env,
        // An unreachable gallery fails at once instead of waiting on DNS for open-vsx.
        EXTENSIONS_GALLERY: JSON.stringify({ serviceUrl: "http://127.0.0.1:9/gallery" }),
        // A private temp dir: Farmhand's one-donor-per-machine lock lives there, so another VS Code window that
        // donates on this machine (a developer's, a demo) cannot hold this run's window back.
        TMPDIR: profile.tmpDir,
        ...env,
      },
    },
  );
  try {
    const port = await waitForPort(child, onLog, timeoutMs);
    const origin = `http://127.0.0.1:${port}`;
    await waitForHealth(origin, timeoutMs);
    return { origin, port, remoteAuthority: `127.0.0.1:${port}`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function waitForPort(child, onLog, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`code-server did not start listening within ${timeoutMs} ms`)), timeoutMs);
    const onLine = (line) => {
      onLog(line);
      const match = /HTTP server listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    forEachLine(child.stdout, onLine);
    forEachLine(child.stderr, onLine);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`code-server exited before listening (code ${code}, signal ${signal})`));
    });
  });
}

async function waitForHealth(origin, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${origin}/healthz`);
      if (response.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`code-server at ${origin} did not answer /healthz within ${timeoutMs} ms`);
}
