#!/usr/bin/env node
// Makes a fresh Debian machine ready for `npm start`, `npm test` and `npm run bench` (run by their pre-scripts and by
// .ci/run): Debian packages (Chromium for the UI tests, ripgrep and build tools for code-server), npm packages, and the
// code-server test harness. Without apt (macOS, other Linux) it installs no system package: it says which to install. Every step is skipped quickly when already done. Uses only Node built-ins, so it
// runs before `npm ci`.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..");
const APT_PACKAGES = ["chromium", "ripgrep", "build-essential", "python3", "pkg-config", "libsecret-1-dev", "libkrb5-dev", "git", "ca-certificates", "clang", "lld", "wasi-libc", "libclang-rt-14-dev-wasm32", "rustc", "libstd-rust-dev-wasm32", "xvfb", "xdotool", "x11-utils", "xprintidle", "dbus", "dbus-x11", "python3-gi", "gir1.2-glib-2.0", "prometheus"];

phase("system packages", () => {
  if (!onPath("dpkg") || !onPath("apt-get")) return checkWithoutApt();
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
  // A linked node_modules (a git worktree sharing another checkout's install) belongs to that checkout: `npm ci`
  // here would empty it for everyone using it.
  if (existsSync(join(root, "node_modules")) && lstatSync(join(root, "node_modules")).isSymbolicLink()) return "linked to another checkout's install; left as it is";
  const marker = join(root, "node_modules", ".package-lock.json");
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(join(root, "package-lock.json")).mtimeMs) return "up to date";
  run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"]);
  return "installed";
});

phase("code-server harness", () => {
  run(process.execPath, [join(root, "test", "harness", "install.mjs")]);
  return "ready";
});

/**
 * No apt (macOS, Fedora, Arch, …): nothing is installed for you; check the tools the layers need and say exactly
 * which packages give them on this system.
 */
function checkWithoutApt() {
  const chromium = process.env.FARMHAND_CHROMIUM ?? "/usr/bin/chromium";
  const tools = { rg: "ripgrep", make: "make", "g++": "a C++ compiler", python3: "python3", "pkg-config": "pkg-config", git: "git" };
  const missing = Object.keys(tools).filter((tool) => !onPath(tool));
  if (!existsSync(chromium)) missing.push("chromium");
  if (missing.length === 0) return `no apt here; the tools are there (Chromium at ${chromium})`;
  const install = installLine(process.platform, readOsRelease());
  throw new Error(
    `no apt/dpkg on this machine, and missing: ${missing.join(", ")}\n` +
      `  install them with: ${install}\n` +
      `  then point FARMHAND_CHROMIUM at the Chromium (or Chrome) binary if it is not ${chromium}`,
  );
}

function installLine(platform, osRelease) {
  if (platform === "darwin") return "brew install ripgrep pkg-config python git && brew install --cask chromium (and xcode-select --install for make and the compiler)";
  const family = `${osRelease.ID ?? ""} ${osRelease.ID_LIKE ?? ""}`;
  if (/fedora|rhel|centos/.test(family)) return "sudo dnf install chromium ripgrep gcc-c++ make python3 pkgconf-pkg-config libsecret-devel krb5-devel git";
  if (/arch/.test(family)) return "sudo pacman -S --needed chromium ripgrep base-devel python pkgconf libsecret krb5 git";
  if (/suse/.test(family)) return "sudo zypper install chromium ripgrep gcc-c++ make python3 pkg-config libsecret-devel krb5-devel git";
  if (/alpine/.test(family)) return "sudo apk add chromium ripgrep build-base python3 pkgconf libsecret-dev krb5-dev git";
  return "your system's packages for: chromium, ripgrep, a C/C++ toolchain (make, g++), python3, pkg-config, libsecret and Kerberos headers, git";
}

function readOsRelease() {
  try {
    return Object.fromEntries(
      readFileSync("/etc/os-release", "utf8")
        .split("\n")
        .map((line) => /^(\w+)=("?)(.*)\2$/.exec(line))
        .filter(Boolean)
        .map((m) => [m[1], m[3]]),
    );
  } catch {
    return {};
  }
}

function onPath(tool) {
  return spawnSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" }).status === 0;
}

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
