// The console's overview and a job's progress (issue 14): while a running job reports progress, the operator's
// open Overview page must not re-run (its figures do not change), while a page that shows that job does (a
// control: it proves the loopback server's instruments see every re-run the progress causes). Counted with the
// server's instruments (GET /__testserver/stats: executions of every function, subscription re-runs included).
import { makeFunctionReference } from "convex/server";
import { expect, test } from "vitest";
import { api } from "../convex/_generated/api";
import { seed, startTestServer, statsPath, statsResetPath, type ServerStats } from "../test/server";
import { newClient } from "./fanout/engines";
import { saveFigures } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/consoleLive.bench.ts", "convex", "test/server"];

const createEnrollment = makeFunctionReference<"mutation", Record<string, unknown>, { token: string }>("admin:createEnrollment");
const PROGRESS_REPORTS = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("console:overview does not re-run while a job's progress changes; the job's own page does", async () => {
  const server = await startTestServer();
  const clients = [newClient(server.url), newClient(server.url), newClient(server.url)];
  try {
    const { orgId, clientKey, workerKeys } = await seed(server, 1);
    const operatorToken = await server.write(async (t) => (await t.mutation(createEnrollment, { orgId, capabilities: ["demo.echo"], canManage: true })).token);
    const [operatorClient, workerClient, submitter] = clients;
    const operator = await operatorClient.mutation(api.workers.enroll, { token: operatorToken, name: "operator", machineId: "operator-machine", capabilities: [] });
    const apiKey = workerKeys[0];
    const jobId = await submitter.mutation(api.jobs.submit, { clientKey, type: "demo.echo", payload: {} });
    const [claim] = await workerClient.mutation(api.workers.claim, { apiKey, capabilities: ["demo.echo"], max: 1 });
    expect(claim.jobId).toBe(jobId);

    let overviewAnswers = 0;
    let jobAnswers = 0;
    const stopOverview = operatorClient.onUpdate(api.console.overview, { apiKey: operator.apiKey }, () => overviewAnswers++);
    const stopJob = operatorClient.onUpdate(api.console.job, { apiKey: operator.apiKey, jobId }, () => jobAnswers++);
    // Settle: both pages answered once, and the summary refresh the claim scheduled (≤ 5 s later) has run.
    await sleep(6_000);
    await fetch(`${server.url}${statsResetPath}`, { method: "POST" });
    const overviewBefore = overviewAnswers;
    const jobBefore = jobAnswers;

    for (let i = 1; i <= PROGRESS_REPORTS; i++) {
      await workerClient.mutation(api.workers.heartbeat, { apiKey, leaseId: claim.leaseId, progress: i / (PROGRESS_REPORTS + 1), status: `step ${i}` });
      await sleep(20);
    }
    await sleep(500);
    const stats = (await (await fetch(`${server.url}${statsPath}`)).json()) as ServerStats;
    stopOverview();
    stopJob();

    const overviewRuns = stats.functions["console:overview"]?.calls ?? 0;
    const jobRuns = stats.functions["console:job"]?.calls ?? 0;
    saveFigures("console_live", {
      overview_reruns_during_progress: {
        value: overviewRuns,
        unit: `re-runs of console:overview while one job reported progress ${PROGRESS_REPORTS} times (${overviewAnswers - overviewBefore} answers pushed)`,
        target: "0",
        pass: overviewRuns === 0,
      },
      job_page_reruns_during_progress: {
        value: jobRuns,
        unit: `re-runs of console:job (the job's page, the control: it shows progress) for the same ${PROGRESS_REPORTS} reports (${jobAnswers - jobBefore} answers pushed)`,
      },
    }, MEASURES);
    expect(jobRuns).toBeGreaterThan(0);
  } finally {
    for (const client of clients) await client.close();
    await server.close();
  }
}, 60_000);
