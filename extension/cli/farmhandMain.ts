import { runCli, type CliIo } from "./main";
import { runSchedule } from "./schedule";
import { runSubmitter, SUBMITTER_USAGE, type SubmitterIo } from "./submitter";

const FARMHAND_USAGE = `Usage: farmhand <command> [options]

Commands:
  submit     submit jobs (one, or one per line of a JSON Lines file), optionally wait for their results
  wait       wait for jobs, or a whole batch, to end
  status     print a job
  schedule   create, list, pause, resume or remove a schedule (a job submitted at each tick of a cron line)
  worker     run a headless worker (the same as farmhand-worker)
  publish    publish a farm app (the same as farmhand-worker publish)

${SUBMITTER_USAGE}

Run farmhand schedule --help, farmhand worker --help and farmhand publish --help for theirs.`;

/** `farmhand <command>`: the submitter's commands, and the worker's (`farmhand-worker` stays its alias). */
export async function runFarmhand(argv: string[], io: CliIo & Omit<SubmitterIo, keyof CliIo>): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "submit":
    case "wait":
    case "status":
      return await runSubmitter(command, rest, io);
    case "schedule":
      return await runSchedule(rest, io);
    case "worker":
      return await runCli(rest, io);
    case "publish":
      return await runCli(["publish", ...rest], io);
    case undefined:
    case "-h":
    case "--help":
    case "help":
      io.out(FARMHAND_USAGE);
      return command === undefined ? 2 : 0;
    default:
      io.err(`farmhand: unknown command ${JSON.stringify(command)}\nRun farmhand --help for usage.`);
      return 2;
  }
}
