import { bulkRetryOfBigDeadLetters, claimHeadsOfBigLanes, consolePageOfBigJobs, dispatcherOverBigLanes, retentionOverBigOutput } from "./issue";
import { capsCases } from "./peaks";

// Issue 18's reproductions: each of these threw on Convex's transaction limits. Every transaction of each
// (scheduled ones included) now stays under half of them: the backend fails any that reads more than 8 MiB
// or writes more than 4 MiB.

const CASES: Array<[string, () => Promise<void>]> = [
  ["the dispatcher offers 3 lanes of 32 ready jobs of 250 KiB, and a small job afterwards at once", dispatcherOverBigLanes],
  ["a claim from the heads of 65 lanes headed by 256 KiB jobs", claimHeadsOfBigLanes],
  ["console:jobs pages of 50 and 100 jobs of 256 KiB", consolePageOfBigJobs],
  ["a bulk retry of 100 dead letters of 256 KiB finishes", bulkRetryOfBigDeadLetters],
  ["retention:sweep deletes 10 old jobs of 400 output chunks of 8 KiB", retentionOverBigOutput],
];

capsCases(CASES);
