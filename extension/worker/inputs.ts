import type { FarmCalls } from "./farmClient";
import type { JobInput } from "./handler";

/** The handler context's `inputs()`: the job's parents' results, one workers:inputs page at a time. */
export function inputsOf(client: Pick<FarmCalls, "inputs">, leaseId: string): { inputs: () => AsyncIterable<JobInput> } {
  return {
    inputs: async function* () {
      let cursor: string | null = null;
      for (;;) {
        const answer = await client.inputs({ leaseId, cursor });
        yield* answer.page;
        if (answer.done || answer.cursor === null) return;
        cursor = answer.cursor;
      }
    },
  };
}
