import { fiveHundredJobBatches, hundredDeadLetters, oneJobAtEveryCap, twoHundredLanes } from "./functions";
import { capsCases } from "./peaks";

// "At the caps": every function that reads a range or a body, at the documented sizes; each call succeeds
// or refuses with a clear code, and no transaction reads more than 8 MiB or writes more than 4 MiB.

const CASES: Array<[string, () => Promise<void>]> = [
  ["one job at every per-job cap: payload, checkpoint, status, 10,000 output chunks, result; every reader; purge", oneJobAtEveryCap],
  ["200 lanes headed by 256 KiB jobs: overviews, summariser, watch, claims, dispatch", twoHundredLanes],
  ["100 dead letters of 256 KiB with full errors: lists, summary, retry, bulk purge", hundredDeadLetters],
  ["a 500-job batch at every row cap, more such rows in one batch id than batchStatus reads: status, console page, bulk cancel", fiveHundredJobBatches],
];

capsCases(CASES);
