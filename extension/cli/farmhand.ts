#!/usr/bin/env node
// farmhand: submit jobs and follow them (submit, wait, status), keep schedules (schedule), run a worker (worker), publish an app (publish).
import { messageOf } from "../worker/errors";
import { runFarmhand } from "./farmhandMain";
import { processIo } from "./main";

runFarmhand(process.argv.slice(2), {
  ...processIo,
  ...(process.stderr.isTTY ? { progress: (text: string) => process.stderr.write(`\r${text}\u001b[K`) } : {}),
  readStdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  },
}).then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`farmhand: ${messageOf(e)}\n`);
    process.exit(1);
  },
);
