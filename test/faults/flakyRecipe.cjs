// The "flaky" recipe of the fault suite: fails (exit 1) while fewer than payload.failTimes earlier attempts of
// payload.key have run, then prints its result. Attempts are counted in a file per key under FARMHAND_FAULTS_DIR,
// so the count survives the worker process being killed.
const { appendFileSync, readFileSync } = require("node:fs");
const { join } = require("node:path");

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (text) => (input += text));
process.stdin.on("end", () => {
  const { key, failTimes } = JSON.parse(input);
  const file = join(process.env.FARMHAND_FAULTS_DIR, String(key).replace(/[^a-z0-9-]/gi, "_"));
  let before = 0;
  try {
    before = readFileSync(file, "utf8").length;
  } catch {
    // first attempt
  }
  appendFileSync(file, "x");
  if (before < failTimes) {
    process.stderr.write(`flaky ${key}: planned failure ${before + 1} of ${failTimes}\n`);
    process.exit(1);
  }
  process.stdout.write(JSON.stringify({ key, attempts: before + 1 }) + "\n");
});
