#!/usr/bin/env node
// Moves convex/lib/ into one folder per domain under convex/, as scripts/domains/map.json says, and rewrites every
// relative path in the repository that named a moved file. Re-playable on a newer main:
//   node scripts/domains/move.mjs          move (git mv), rewrite, write each domain's README.md
//   node scripts/domains/move.mjs --check  only report: unmapped files and how many paths would change
// It stops, changing nothing, when a convex/lib file is not in the map (add it and re-run), when convex/lib is gone
// (it ran already), or when a destination exists.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const checkOnly = process.argv.includes("--check");
const map = JSON.parse(readFileSync(path.join(root, "scripts/domains/map.json"), "utf8"));
const LIB = "convex/lib";

function fail(lines) {
  console.error(["move.mjs: nothing was changed.", ...lines].join("\n"));
  process.exit(1);
}

function filesUnder(dir) {
  const out = [];
  for (const name of readdirSync(path.join(root, dir))) {
    const rel = `${dir}/${name}`;
    if (statSync(path.join(root, rel)).isDirectory()) out.push(...filesUnder(rel));
    else out.push(rel);
  }
  return out;
}

// old path (from the repo root) -> new path
function planMoves() {
  if (!existsSync(path.join(root, LIB)) || filesUnder(LIB).length === 0) {
    fail([`${LIB}/ is gone or empty: the move has run already. To re-run, start from a tree where ${LIB}/ exists.`]);
  }
  const moves = new Map();
  const duplicates = [];
  for (const [domain, spec] of Object.entries(map.domains)) {
    for (const file of spec.files) {
      const to = `convex/${domain}/${path.posix.basename(file)}`;
      if ([...moves.values()].includes(to)) duplicates.push(to);
      moves.set(`${LIB}/${file}`, to);
    }
  }
  const actual = filesUnder(LIB);
  const unmapped = actual.filter((f) => !moves.has(f));
  const vanished = [...moves.keys()].filter((f) => !actual.includes(f));
  const taken = [...moves.values()].filter((to) => existsSync(path.join(root, to)));
  const problems = [
    ...unmapped.map((f) => `  not in scripts/domains/map.json: ${f}  (add it to a domain's "files")`),
    ...duplicates.map((f) => `  two files would land on ${f}`),
    ...taken.map((f) => `  destination exists already: ${f}`),
  ];
  if (problems.length > 0) fail(problems);
  for (const f of vanished) {
    console.warn(`move.mjs: mapped but absent in ${LIB}/ (skipped; drop it from the map): ${f}`);
    moves.delete(f);
  }
  return moves;
}

const SKIP_DIRS = new Set(["node_modules", ".git", "_generated", "dist", "out", "build", ".state", "artifacts"]);
const CODE = /\.(ts|tsx|mts|cts|mjs|cjs|js)$/;
const TEXT = /\.(ts|tsx|mts|cts|mjs|cjs|js|json|jsonc|md)$/;

function repoFiles(dir = ".") {
  const out = [];
  for (const name of readdirSync(path.join(root, dir))) {
    if (SKIP_DIRS.has(name) || (name.startsWith(".") && name !== ".ci")) continue;
    const rel = dir === "." ? name : `${dir}/${name}`;
    if (rel === "scripts/domains") continue; // this codemod and its map name the old paths on purpose
    const full = path.join(root, rel);
    if (statSync(full).isDirectory()) out.push(...repoFiles(rel));
    else if (TEXT.test(name) && rel !== "CHANGELOG.md" && rel !== "package-lock.json") out.push(rel);
  }
  return out;
}

const exists = (rel) => existsSync(path.join(root, rel)) && statSync(path.join(root, rel)).isFile();

// The file a relative specifier names, as TypeScript/esbuild resolve it (".js" may stand for ".ts").
function resolveSpecifier(fromFile, spec) {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), spec));
  const candidates = [base, base.replace(/\.(m|c)?js$/, ".$1ts"), base.replace(/\.js$/, ".tsx"), base.replace(/\.js$/, ".d.ts")];
  for (const ext of [".ts", ".tsx", ".d.ts", ".mts", ".mjs", ".js"]) candidates.push(base + ext);
  candidates.push(`${base}/index.ts`);
  return candidates.find(exists);
}

function specifierFor(fromFile, target, original) {
  let rel = path.posix.relative(path.posix.dirname(fromFile), target);
  if (!rel.startsWith(".")) rel = `./${rel}`;
  const ext = path.posix.extname(original);
  const targetExt = target.endsWith(".d.ts") ? ".d.ts" : path.posix.extname(target);
  if (ext === "") return rel.slice(0, -targetExt.length);
  if (ext === targetExt) return rel;
  return rel.slice(0, -targetExt.length) + ext; // ".js" written for a ".ts" file stays ".js"
}

// Every quoted relative path in code: import/export … from, import(), typeof import(), vi.mock(), require(), and
// path strings beside them. Only a string that resolves, from its own file's folder, to a moved file is rewritten.
const QUOTED_RELATIVE = /(["'`])(\.{1,2}\/[^"'`\s$]+)\1/g;

function rewriteCode(file, text, moves, newPathOf) {
  const newFile = newPathOf(file);
  return text.replace(QUOTED_RELATIVE, (whole, quote, spec) => {
    const target = resolveSpecifier(file, spec);
    if (!target) return whole;
    const newTarget = moves.get(target) ?? target;
    if (newTarget === target && newFile === file) return whole;
    return `${quote}${specifierFor(newFile, newTarget, spec)}${quote}`;
  });
}

// Repo-root paths in prose and config ("convex/queue/submit.ts", "convex/observability/fold.ts"), and the extension's
// lint rule that keeps it out of the backend's modules.
function rewriteRootPaths(text, moves) {
  let out = text;
  const longestFirst = [...moves.keys()].sort((a, b) => b.length - a.length);
  for (const from of longestFirst) out = out.split(from).join(moves.get(from));
  // the short form comments use: "lib/metrics/fold.ts" -> "observability/fold.ts"
  for (const from of longestFirst) {
    const short = from.slice("convex/".length).replaceAll(".", "\\.");
    out = out.replace(new RegExp(`(?<![\\w/.-])${short}`, "g"), moves.get(from).slice("convex/".length));
  }
  const domainGlobs = Object.keys(map.domains).map((d) => `"**/convex/${d}/*"`).join(", ");
  return out.split(`"**/${LIB}/*"`).join(domainGlobs).split(`${LIB}/*`).join("convex/<domain>/*");
}

function readme(domain, spec) {
  const imports = spec.mayImport.length === 0 ? "nothing under convex/ but the schema and _generated" : spec.mayImport.map((d) => `${d}/`).join(", ");
  const entry = spec.entry
    ? `Other domains call it through \`${spec.entry}\` (its named entry) only; see test/unit/architecture/domains.test.ts.`
    : "Every domain may import it; it imports no domain.";
  return `# convex/${domain}/

Owns ${spec.owns}.

May import: ${imports}. ${entry}
Files and domains: scripts/domains/map.json; the table in docs/ARCHITECTURE.md.
`;
}

const moves = planMoves();
const newPathOf = (f) => moves.get(f) ?? f;
const edits = [];
for (const file of repoFiles()) {
  const text = readFileSync(path.join(root, file), "utf8");
  let next = CODE.test(file) ? rewriteCode(file, text, moves, newPathOf) : text;
  next = rewriteRootPaths(next, moves);
  if (next !== text) edits.push({ file, next });
}

if (checkOnly) {
  console.log(`move.mjs --check: ${moves.size} files to move, ${edits.length} files to rewrite; map covers ${LIB}/.`);
  process.exit(0);
}

for (const { file, next } of edits) writeFileSync(path.join(root, file), next);
for (const [from, to] of moves) {
  mkdirSync(path.dirname(path.join(root, to)), { recursive: true });
  execFileSync("git", ["mv", from, to], { cwd: root, stdio: "inherit" });
}
for (const [domain, spec] of Object.entries(map.domains)) {
  writeFileSync(path.join(root, `convex/${domain}/README.md`), readme(domain, spec));
  execFileSync("git", ["add", `convex/${domain}/README.md`], { cwd: root });
}
// convex/_generated/api.d.ts names every module under convex/, so it changes with the paths.
execFileSync("npx", ["convex", "codegen", "--system-udfs", "--typecheck", "disable"], { cwd: root, stdio: "inherit" });
console.log(`move.mjs: moved ${moves.size} files into ${Object.keys(map.domains).length} domains, rewrote ${edits.length} files, regenerated convex/_generated.`);
console.log("Next: npm run typecheck && npm run lint");
