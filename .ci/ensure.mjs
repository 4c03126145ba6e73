#!/usr/bin/env node
// Makes a fresh Debian machine ready for `npm start` and `npm test` (run by their pre-scripts and by .ci/run):
// Debian packages (Chromium for the UI tests, ripgrep and build tools for code-server), npm packages, and the
// code-server test harness. Every step is skipped quickly when already done. Uses only Node built-ins, so it
// runs before `npm ci`.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..");
const APT_PACKAGES = ["chromium", "ripgrep", "build-essential", "python3", "pkg-config", "libsecret-1-dev", "libkrb5-dev", "git", "ca-certificates", "clang", "lld", "wasi-libc", "libclang-rt-14-dev-wasm32", "rustc", "libstd-rust-dev-wasm32"];

phase("Debian packages", () => {
  const missing = APT_PACKAGES.filter((p) => spawnSync("dpkg", ["-s", p], { stdio: "ignore" }).status !== 0);
  if (missing.length === 0) return "already installed";
  if (process.getuid?.() !== 0) {
    throw new Error(`missing Debian packages: ${missing.join(" ")}\n  install them with: sudo apt-get update && sudo apt-get install -y ${missing.join(" ")}`);
  }
  run("apt-get", ["update", "-qq"]);
  run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...missing], { DEBIAN_FRONTEND: "noninteractive" });
  return `installed ${missing.join(", ")}`;
});

phase("npm packages", () => {
  const marker = join(root, "node_modules", ".package-lock.json");
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(join(root, "package-lock.json")).mtimeMs) return "up to date";
  run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"]);
  return "installed";
});

phase("code-server harness", () => {
  run(process.execPath, [join(root, "test", "harness", "install.mjs")]);
  return "ready";
});

function phase(name, step) {
  const started = Date.now();
  try {
    const outcome = step();
    console.log(`[setup] ${name}: ${outcome} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } catch (error) {
    console.error(`[setup] ${name} failed: ${error.message}`);
    process.exit(1);
  }
}

function run(command, args, env = {}) {
  execFileSync(command, args, { cwd: root, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, ...env } });
}
