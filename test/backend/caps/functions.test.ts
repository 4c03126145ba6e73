import { fiveHundredJobBatches, fullListPageOfDenseResults, hundredDeadLetters, oneJobAtEveryCap, twoHundredLanes } from "./functions";
import { capsCases } from "./peaks";
import { noQuorumWithTenBigResults } from "./replicated";

// "At the caps": every function that reads a range or a body, at the documented sizes; each call succeeds
// or refuses with a clear code, and no transaction reads more than 8 MiB or writes more than 4 MiB.

const CASES: Array<[string, () => Promise<void>]> = [
  ["one job at every per-job cap: payload, checkpoint, status, 10,000 output chunks, result; every reader; purge", () => oneJobAtEveryCap()],
  ["the same with output in CJK (3 bytes a character): chunks are capped in UTF-8 bytes", () => oneJobAtEveryCap("cjk")],
  ["the same with output in emoji (4 bytes a character)", () => oneJobAtEveryCap("emoji")],
  ["a no_quorum job holding 10 distinct 256 KiB results and a page of output by its instances: jobs:get, the long poll, console:job", noQuorumWithTenBigResults],
  ["200 lanes headed by 256 KiB jobs: overviews, summariser, watch, claims, dispatch", twoHundredLanes],
  ["100 dead letters of 256 KiB with full errors: lists, summary, retry, bulk purge", hundredDeadLetters],
  ["25 succeeded jobs whose results of numbers are 216 KiB stored (49 KB of JSON): jobs:list, GET /api/jobs and a child's workers:inputs page within the read budget", fullListPageOfDenseResults],
  ["a 500-job batch at every row cap, more such rows in one batch id than batchStatus reads: status, console page, bulk cancel", fiveHundredJobBatches],
];

capsCases(CASES);
