#!/usr/bin/env node
// farmhand-worker: the engine without VS Code.
import { runCli } from "./main";

runCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`farmhand-worker: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
