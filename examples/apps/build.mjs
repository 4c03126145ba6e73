#!/usr/bin/env node
// Builds the example apps to WebAssembly (WASI preview 1) in examples/apps/build/: `npm run build:apps`.
// C with Debian's clang and wasi-libc, Rust with Debian's rustc and its wasm32-wasi std (called as /usr/bin/rustc:
// a rustup rustc earlier on PATH may lack that target; set RUSTC to use another). An app whose .wasm is newer
// than its sources is skipped; `--force` rebuilds all. Outputs are written to a temporary name, then renamed.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const BUILD_DIR = join(here, "build");
const HEADER = join(here, "common", "farmapp.h");
const RUSTC = process.env.RUSTC || (process.platform === "win32" ? "rustc" : "/usr/bin/rustc");
const CLANG = process.env.CLANG || "clang";
const APT_HINT = "apt-get install -y --no-install-recommends clang lld wasi-libc libclang-rt-14-dev-wasm32 rustc libstd-rust-dev-wasm32";

const APPS = [
  { name: "mandelbrot", sources: [join(here, "mandelbrot", "main.c"), HEADER], build: clang },
  { name: "primes", sources: [join(here, "primes", "main.c"), HEADER], build: clang },
  { name: "montecarlo", sources: [join(here, "montecarlo", "main.rs")], build: rustc },
];

function clang(source, out) {
  tool(CLANG, ["--target=wasm32-wasi", "-O2", "-Wall", "-Wextra", "-Werror", "-Wl,--strip-all", "-o", out, source]);
}

function rustc(source, out) {
  tool(RUSTC, ["--edition", "2021", "--target", "wasm32-wasi", "-O", "-C", "strip=symbols", "-o", out, source]);
}

function tool(command, args) {
  try {
    execFileSync(command, args, { stdio: ["ignore", "inherit", "inherit"] });
  } catch (error) {
    if (error.code === "ENOENT") throw new Error(`${command} not found; on Debian: ${APT_HINT}`);
    throw new Error(`${command} failed (${error.status ?? error.signal}); is its wasm32-wasi target installed? On Debian: ${APT_HINT}`);
  }
}

function upToDate(out, sources) {
  if (!existsSync(out)) return false;
  const built = statSync(out).mtimeMs;
  return sources.every((s) => statSync(s).mtimeMs <= built);
}

export function buildApps({ force = false, log = console.log } = {}) {
  mkdirSync(BUILD_DIR, { recursive: true });
  for (const app of APPS) {
    const out = join(BUILD_DIR, `${app.name}.wasm`);
    if (!force && upToDate(out, app.sources)) {
      log(`[apps] ${app.name}: up to date`);
      continue;
    }
    const temp = `${out}.${process.pid}.tmp`;
    try {
      app.build(app.sources[0], temp);
      renameSync(temp, out);
    } finally {
      rmSync(temp, { force: true });
    }
    log(`[apps] ${app.name}: built ${out} (${statSync(out).size} bytes)`);
  }
  return Object.fromEntries(APPS.map((a) => [a.name, join(BUILD_DIR, `${a.name}.wasm`)]));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    buildApps({ force: process.argv.includes("--force") });
  } catch (error) {
    console.error(`[apps] ${error.message}`);
    process.exit(1);
  }
}
