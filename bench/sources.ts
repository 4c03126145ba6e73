// What a benchmark measures, as a fingerprint of its source files: results.json keeps, for each benchmark, one
// hash per measured path (a file, or a folder's every file), taken when its figures were saved. The unit test
// test/unit/bench/freshness.test.ts recomputes them, so a change to a measured path without re-running its
// benchmark (and so regenerating bench/REPORT.md) fails the suite, naming the benchmarks and paths.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";

const ALWAYS_SKIPPED = [".git", "node_modules"];

/** The repository's .gitignore as a test on relative paths (names, paths and `*` globs; enough for ours). */
function ignoredBy(root: string): (path: string) => boolean {
  const file = join(root, ".gitignore");
  const patterns = (existsSync(file) ? readFileSync(file, "utf8").split("\n") : [])
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#") && !line.startsWith("!"))
    .map((line) => line.replace(/\/$/, ""))
    .concat(ALWAYS_SKIPPED)
    .map((pattern) => {
      const glob = pattern.replace(/^\//, "").replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*");
      // a pattern without a slash matches that name anywhere; with one, that path from the root
      return new RegExp(pattern.replace(/^\//, "").includes("/") ? `^${glob}(/|$)` : `(^|/)${glob}(/|$)`);
    });
  return (path) => patterns.some((pattern) => pattern.test(path));
}

function walk(root: string, path: string, ignored: (path: string) => boolean): string[] {
  const full = join(root, path);
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { withFileTypes: true })
    .map((entry) => ({ entry, relativePath: join(path, entry.name) }))
    .filter(({ relativePath }) => !ignored(relativePath.split(sep).join("/")))
    .flatMap(({ entry, relativePath }) => (entry.isDirectory() ? walk(root, relativePath, ignored) : [relativePath]));
}

/**
 * The path's source files: those git does not ignore (tracked or new), so runtime state such as
 * test/harness/.state/ and installed packages never count. Where git cannot answer (no checkout, or a checkout
 * owned by another user, which git refuses without safe.directory) the same rule from .gitignore read by hand.
 */
export function filesUnder(root: string, path: string, { git = true } = {}): string[] {
  if (!git) return walk(root, path, ignoredBy(root));
  let listed: string;
  try {
    listed = execFileSync("git", ["-c", "safe.directory=*", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", path], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return walk(root, path, ignoredBy(root));
  }
  // a file deleted from the work tree but still in the index is gone
  return listed.split("\0").filter((file) => file !== "" && existsSync(join(root, file)));
}

/** One hash over the path's files: their paths (relative to the repository) and contents, in a stable order. */
export function hashPath(path: string, root = process.cwd()): string {
  if (!existsSync(join(root, path))) return "missing";
  const hash = createHash("sha256");
  for (const file of filesUnder(root, path).sort()) {
    hash.update(relative(root, join(root, file)).split(sep).join("/"));
    hash.update("\0");
    hash.update(readFileSync(join(root, file)));
    hash.update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

export type Measured = Record<string, string>;

export function fingerprint(paths: readonly string[], root = process.cwd()): Measured {
  return Object.fromEntries([...new Set(paths)].sort().map((path) => [path, hashPath(path, root)]));
}

/** The measured paths whose files changed since the fingerprint was taken. */
export function changedPaths(measured: Measured, root = process.cwd()): string[] {
  return Object.entries(measured)
    .filter(([path, hash]) => hashPath(path, root) !== hash)
    .map(([path]) => path);
}
