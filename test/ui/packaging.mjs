// Packages the extension with the repo's own `npm run package` and reads what went in.
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** The .vsix each folder was packaged into by this process: every UI suite of one run installs the same one. */
const packaged = new Map();

/** Runs `npm run package` in `dir` (once per process) and returns the path of the newest .vsix it left there. */
export function packageExtension(dir) {
  if (!packaged.has(dir)) packaged.set(dir, packageNow(dir));
  return packaged.get(dir);
}

function packageNow(dir) {
  const started = Date.now();
  const result = spawnSync("npm", ["run", "--silent", "package"], { cwd: dir, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`npm run package failed (exit ${result.status}):\n${result.stdout}${result.stderr}`);
  const fresh = readdirSync(dir)
    .filter((name) => name.endsWith(".vsix"))
    .map((name) => ({ path: join(dir, name), mtime: statSync(join(dir, name)).mtimeMs }))
    .filter((file) => file.mtime >= started - 1_000)
    .sort((a, b) => b.mtime - a.mtime);
  if (fresh.length === 0) throw new Error(`npm run package wrote no .vsix in ${dir}`);
  return fresh[0].path;
}

/** `vsce ls` in `dir`: the files vsce would package (dependencies are bundled, so none are listed). */
export function vsceList(dir) {
  const out = execFileSync("npx", ["vsce", "ls", "--no-dependencies"], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  return out.split("\n").map((line) => line.trim()).filter(Boolean).sort();
}

// vsce renames these documents inside the .vsix; map them back to the names `vsce ls` prints.
const RENAMED = { "readme.md": "README.md", "changelog.md": "CHANGELOG.md", "LICENSE.txt": "LICENSE" };

/** The extension's files inside a .vsix (a zip): paths under `extension/`, named as `vsce ls` names them. */
export function vsixEntries(vsixPath) {
  const out = execFileSync("python3", ["-c", "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))", vsixPath], {
    encoding: "utf8",
  });
  return out
    .split("\n")
    .filter((name) => name.startsWith("extension/"))
    .map((name) => name.slice("extension/".length))
    .map((name) => RENAMED[name] ?? name)
    .sort();
}

/** The size in bytes of one extension file inside a .vsix (`path` as `vsce ls` names it), uncompressed. */
export function vsixEntrySize(vsixPath, path) {
  const out = execFileSync("python3", ["-c", "import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).getinfo(sys.argv[2]).file_size)", vsixPath, `extension/${path}`], {
    encoding: "utf8",
  });
  return Number(out.trim());
}
