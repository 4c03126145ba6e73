// Where the harness keeps things. Everything under node_modules/ and .state/ is git-ignored.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const harnessDir = dirname(fileURLToPath(import.meta.url));
export const repoDir = join(harnessDir, "..", "..");
export const stateDir = join(harnessDir, ".state");
export const codeServerDir = join(harnessDir, "node_modules", "code-server");
export const vscodeDir = join(codeServerDir, "lib", "vscode");
export const codeServerEntry = join(codeServerDir, "out", "node", "entry.js");
export const artifactsDir = join(repoDir, "test", "artifacts");
/** The extension under test: this repo, or a prebuilt extension folder from FARMHAND_EXTENSION_DIR (no build then). */
export const extensionDir = process.env.FARMHAND_EXTENSION_DIR || repoDir;
