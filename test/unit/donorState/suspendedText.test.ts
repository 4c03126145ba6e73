import { describe, expect, it } from "vitest";
import { suspendedText } from "../../../extension/donorState/donorStateText";

describe("suspendedText (the status bar while jobs are frozen)", () => {
  const now = 10_000_000;

  it("says nothing while no job is frozen", () => {
    expect(suspendedText([], now)).toBeUndefined();
    expect(suspendedText([{ type: "demo.primes" }], now)).toBeUndefined();
  });

  it("says the jobs are suspended because the owner is using the machine, and lists only the frozen ones", () => {
    expect(
      suspendedText(
        [
          { type: "demo.primes", suspendedSince: now - 3 * 60_000 - 5_000 },
          { type: "demo.echo" },
          { type: "recipe.build", suspendedSince: now - 10_000 },
        ],
        now,
      ),
    ).toEqual({ text: "suspended — you are using this machine", held: ["demo.primes, frozen 3 min", "recipe.build, frozen just now"] });
  });
});
