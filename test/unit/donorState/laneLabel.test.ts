import { describe, expect, it } from "vitest";
import { classOf, classKey } from "../../../convex/lanes/requirements";
import { formatMB, laneLabel, needsText } from "../../../convex/queue/laneLabel";
import { laneTooltip, laneWaitNote } from "../../../extension/donorState/donorStateText";
import type { LaneRow } from "../../../extension/donorState/donorState";

describe("lane labels", () => {
  it("read the type and the class of machine", () => {
    expect(laneLabel({ capabilities: ["demo.echo"], requirements: { memoryMB: 65_536 } })).toBe("demo.echo · ≥ 64 GB memory");
    expect(laneLabel({ capabilities: ["apps"], requirements: { memoryMB: 128 } })).toBe("apps · ≥ 128 MB memory");
    expect(laneLabel({ capabilities: ["demo.echo"] })).toBe("demo.echo");
    expect(laneLabel({ capabilities: [] })).toBe("any worker");
    expect(laneLabel({ capabilities: ["gpu", "train"], requirements: { cores: 8, gpu: { vendor: "nvidia", vramMB: 16_384 } } })).toBe(
      "gpu + train · ≥ 8 cores, a nvidia GPU ≥ 16 GB",
    );
    expect(needsText({ gpu: {} })).toBe("a GPU");
  });

  it("never give two lanes of different classes the same label", () => {
    const asks = [undefined, { minMemoryMB: 100 }, { minMemoryMB: 128 }, { minMemoryMB: 129 }, { minMemoryMB: 1_536 }, { minMemoryMB: 65_536 }, { minCores: 3 }, { gpu: {} }, { gpu: { minVramMB: 8_000 } }];
    const lanes = new Map<string, string>();
    for (const caps of [["apps"], ["demo.echo"]]) {
      for (const ask of asks) {
        const requirements = classOf(ask);
        lanes.set(`${caps.join(",")}|${requirements ? classKey(requirements) : ""}`, laneLabel({ capabilities: caps, requirements }));
      }
    }
    // one label per routing key
    expect(new Set(lanes.values()).size).toBe(lanes.size);
  });

  it("an apps lane names the apps it holds jobs of, with 'and more' past the ones it noted", () => {
    expect(laneLabel({ capabilities: ["apps"], requirements: { memoryMB: 128 }, apps: [{ name: "mandelbrot", version: 3 }] })).toBe("app.mandelbrot v3 · ≥ 128 MB memory");
    expect(laneLabel({ capabilities: ["apps", "gpu"], apps: [{ name: "a", version: 1 }, { name: "a", version: 2 }], moreApps: true })).toBe("app.a v1, app.a v2 and more + gpu");
    // a lane that noted none (made before lanes noted apps) keeps the capability's name
    expect(laneLabel({ capabilities: ["apps"], apps: [] })).toBe("apps");
  });

  it("memory in the unit people read", () => {
    expect([128, 1_024, 1_536, 16_384, 65_536].map(formatMB)).toEqual(["128 MB", "1 GB", "1.5 GB", "16 GB", "64 GB"]);
  });
});

describe("a lane's tooltip in the Farm view", () => {
  const lane: LaneRow = { routingKey: "demo.echo|mem>=65536", capabilities: ["demo.echo"], requirements: { memoryMB: 65_536 }, pending: 2, running: 0, servable: true, nobodyHandles: [] };

  it("gives the farm's own sentence and code", () => {
    const why = { waitCode: "no_machine_meets", waitReason: "needs 64 GB of memory; the largest machine has 16 GB: no machine of the farm can run it" };
    expect(laneTooltip({ ...lane, ...why })).toBe(
      "demo.echo · ≥ 64 GB memory\n2 pending · 0 running\nWhy it waits: needs 64 GB of memory; the largest machine has 16 GB: no machine of the farm can run it (no_machine_meets)",
    );
    expect(laneWaitNote({ ...lane, ...why })).toBe("no machine meets its requirements");
  });

  it("says nothing of waiting when something online can run it", () => {
    expect(laneTooltip(lane)).toBe("demo.echo · ≥ 64 GB memory\n2 pending · 0 running");
    expect(laneWaitNote(lane)).toBeUndefined();
  });
});
