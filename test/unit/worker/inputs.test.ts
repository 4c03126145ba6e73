import { describe, expect, it } from "vitest";
import type { CallArgs, InputsPage } from "../../../extension/worker/farmClient";
import { inputsOf } from "../../../extension/worker/inputs";

type Row = InputsPage["page"][number];
const row = (n: number): Row => ({ jobId: `job${n}` as Row["jobId"], result: { n } });

/** A farm that answers workers:inputs with these pages, in order, and records what it was asked. */
function pagedFarm(pages: InputsPage[]) {
  const asked: Array<CallArgs<"inputs">> = [];
  const client = {
    inputs: (args: CallArgs<"inputs">) => {
      asked.push(args);
      const page = pages[asked.length - 1];
      if (!page) return Promise.reject(new Error(`asked for page ${asked.length} of ${pages.length}`));
      return Promise.resolve(page);
    },
  };
  return { client, asked };
}

async function all(iterable: AsyncIterable<Row>): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const r of iterable) rows.push(r);
  return rows;
}

describe("inputs(): every page until the farm says done", () => {
  it("follows pages the byte budget cut short (done: false), an empty one too, to the last page", async () => {
    const { client, asked } = pagedFarm([
      { page: [row(1), row(2)], cursor: "j:2", done: false }, // two big results filled the page's bytes
      { page: [], cursor: "b:1700", done: false }, // the budget went on failed batch jobs: nothing to give, more to read
      { page: [row(3)], cursor: null, done: true },
    ]);
    expect(await all(inputsOf(client, "lease-1").inputs())).toEqual([row(1), row(2), row(3)]);
    expect(asked).toEqual([
      { leaseId: "lease-1", cursor: null },
      { leaseId: "lease-1", cursor: "j:2" },
      { leaseId: "lease-1", cursor: "b:1700" },
    ]);
  });

  it("stops at the page that says done, and asks nothing more", async () => {
    const { client, asked } = pagedFarm([{ page: [row(1)], cursor: null, done: true }]);
    expect(await all(inputsOf(client, "lease-2").inputs())).toEqual([row(1)]);
    expect(asked).toHaveLength(1);
  });

  it("reads nothing until the handler asks, and only as far as it reads", async () => {
    const { client, asked } = pagedFarm([
      { page: [row(1)], cursor: "j:1", done: false },
      { page: [row(2)], cursor: null, done: true },
    ]);
    const inputs = inputsOf(client, "lease-3").inputs();
    expect(asked).toHaveLength(0);
    for await (const r of inputs) {
      expect(r).toEqual(row(1));
      break;
    }
    expect(asked).toHaveLength(1);
  });
});
