#!/usr/bin/env node
// Installs code-server (pinned in ./package.json) for the extension-host and UI tests, offline-friendly:
// no step downloads a prebuilt binary. Idempotent: a marker in .state/ makes a repeated run take well under a second.
// Run: `npm run harness:install` from the repo root. `--force` reinstalls.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { codeServerDir, harnessDir, stateDir, vscodeDir } from "./paths.mjs";

const markerFile = join(stateDir, "installed.json");
const force = process.argv.includes("--force");

const wanted = {
  lock: createHash("sha256").update(readFileSync(join(harnessDir, "package-lock.json"))).digest("hex"),
  node: process.versions.modules,
  installer: createHash("sha256").update(readFileSync(new URL(import.meta.url))).digest("hex"),
};

// A worktree may link node_modules to another checkout's install; npm ci through the link would empty it for both.
if (isLinkedInstall()) {
  if (existsSync(join(codeServerDir, "out/node/entry.js"))) {
    console.log("code-server harness: node_modules is linked to another checkout's install; leaving it alone");
    process.exit(0);
  }
  fail("test/harness/node_modules is a link to an install without code-server: run the install where it points");
}

if (!force && isInstalled()) {
  console.log("code-server harness already installed (test/harness/.state/installed.json); --force reinstalls");
  process.exit(0);
}

const started = Date.now();
checkPrerequisites();
rmSync(markerFile, { force: true });

step("code-server package, without its postinstall (it would download ripgrep)", () =>
  npm(harnessDir, ["ci", "--ignore-scripts"]),
);
step("argon2 native module", () => npm(harnessDir, ["rebuild", "argon2"]));
step("VS Code server dependencies, scripts off", () =>
  npm(vscodeDir, ["install", "--omit=dev", "--ignore-scripts"]),
);
step("ripgrep: Debian's rg in place of the download", linkDebianRipgrep);
// node-pty's post-install runs `npx node-gyp configure`; npx must be allowed to fetch node-gyp from the registry.
step("VS Code server native modules", () => npm(vscodeDir, ["rebuild"], { npm_config_yes: "true" }));
step("links the npm postinstall would make", makePostinstallLinks);
// Their postinstall trims TypeScript to what the built-in language features load; it lists every file it removes.
step("built-in extensions' dependencies", () =>
  npm(join(vscodeDir, "extensions"), ["install", "--omit=dev"], {}, ["ignore", "ignore", "inherit"]),
);
step("native modules load", checkNativeModulesLoad);

mkdirSync(stateDir, { recursive: true });
writeFileSync(markerFile, JSON.stringify(wanted, null, 2) + "\n");
console.log(`code-server harness installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);

function isLinkedInstall() {
  const modules = join(harnessDir, "node_modules");
  return existsSync(modules) && lstatSync(modules).isSymbolicLink();
}

function isInstalled() {
  if (!existsSync(markerFile)) return false;
  try {
    const marker = JSON.parse(readFileSync(markerFile, "utf8"));
    const same = Object.keys(wanted).every((key) => marker[key] === wanted[key]);
    return same && existsSync(join(codeServerDir, "out/node/entry.js")) && existsSync(join(vscodeDir, "node_modules.asar"));
  } catch {
    return false;
  }
}

function checkPrerequisites() {
  const major = Number(process.versions.node.split(".")[0]);
  if (major !== 20) fail(`code-server 4.100 needs Node 20; this is Node ${process.versions.node}`);
  const missing = ["rg", "make", "g++", "python3"].filter((tool) => !onPath(tool));
  if (missing.length > 0) {
    fail(`missing tools: ${missing.join(", ")}. On Debian: apt-get install ripgrep build-essential python3 libkrb5-dev`);
  }
  if (!existsSync("/usr/include/gssapi/gssapi.h")) {
    fail("missing Kerberos headers for code-server's kerberos module. On Debian: apt-get install libkrb5-dev");
  }
}

function linkDebianRipgrep() {
  const binDir = join(vscodeDir, "node_modules/@vscode/ripgrep/bin");
  mkdirSync(binDir, { recursive: true });
  const rg = execFileSync("sh", ["-c", "command -v rg"], { encoding: "utf8" }).trim();
  replaceWithSymlink(rg, join(binDir, "rg"));
}

function makePostinstallLinks() {
  replaceWithSymlink("node_modules", join(vscodeDir, "node_modules.asar"));
  replaceWithSymlink("code-linux.sh", join(vscodeDir, "bin/remote-cli/code-server"));
  replaceWithSymlink("browser-linux.sh", join(vscodeDir, "bin/helpers/browser.sh"));
}

function checkNativeModulesLoad() {
  const fromVscode = createRequire(join(vscodeDir, "package.json"));
  const fromCodeServer = createRequire(join(codeServerDir, "package.json"));
  for (const name of ["node-pty", "@vscode/spdlog", "native-watchdog", "kerberos"]) fromVscode(name);
  fromCodeServer("argon2");
  const rg = spawnSync(join(vscodeDir, "node_modules/@vscode/ripgrep/bin/rg"), ["--version"], { encoding: "utf8" });
  if (rg.status !== 0) fail("the ripgrep link does not run");
}

function replaceWithSymlink(target, path) {
  if (existsOrDangling(path)) rmSync(path, { recursive: true, force: true });
  symlinkSync(target, path);
}

function existsOrDangling(path) {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function onPath(tool) {
  return spawnSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" }).status === 0;
}

function npm(cwd, args, env = {}, stdio = "inherit") {
  const result = spawnSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd,
    stdio,
    env: { ...process.env, ...env },
  });
  if (result.status !== 0) fail(`npm ${args.join(" ")} failed in ${cwd} (exit ${result.status})`);
}

function step(title, action) {
  const stepStarted = Date.now();
  console.log(`harness: ${title}…`);
  action();
  console.log(`harness: ${title}: ${((Date.now() - stepStarted) / 1000).toFixed(1)} s`);
}

function fail(message) {
  console.error(`harness install failed: ${message}`);
  process.exit(1);
}
