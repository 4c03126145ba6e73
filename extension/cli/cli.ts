#!/usr/bin/env node
// farmhand-worker: the engine without VS Code.
import { messageOf } from "../worker/errors";
import { runCli } from "./main";

runCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`farmhand-worker: ${messageOf(e)}\n`);
    process.exit(1);
  },
);
