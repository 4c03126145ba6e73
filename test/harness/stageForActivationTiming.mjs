// A copy of the extension the host benchmark can activate itself, and activate again: the same bundles, media and
// manifest, but without activation events (so nothing activates it before the bench times its activate():
// onStartupFinished may fire before the bench's code runs), and entered through bench-main.js, which keeps the
// extension's context so the bench can deactivate it and activate it again in the same host (test/host/bench/
// measure.ts). Contributions (views, commands) stay: in a fresh window none of them is triggered on its own.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const BENCH_MAIN = `// Written by test/harness/stageForActivationTiming.mjs: the extension, and a way to activate it again.
const extension = require(${JSON.stringify("./dist/extension.js")});
let context;
exports.activate = (ctx) => {
  context = ctx;
  return extension.activate(ctx);
};
exports.deactivate = () => extension.deactivate();
/** Deactivate as VS Code does (deactivate(), then every subscription disposed) and activate again with the same context. */
exports.activateAgain = async () => {
  await extension.deactivate();
  for (const disposable of context.subscriptions.splice(0).reverse()) disposable.dispose();
  return await extension.activate(context);
};
`;

/** Returns `{ dir, remove }`: the staged extension folder and a function that deletes it. */
export function stageForActivationTiming(extensionDir) {
  const dir = mkdtempSync(join(tmpdir(), "farmhand-staged-"));
  const manifest = JSON.parse(readFileSync(join(extensionDir, "package.json"), "utf8"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ ...manifest, main: "./bench-main.js", activationEvents: [] }, null, 2));
  writeFileSync(join(dir, "bench-main.js"), BENCH_MAIN);
  for (const folder of ["dist", "media"]) cpSync(join(extensionDir, folder), join(dir, folder), { recursive: true });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
