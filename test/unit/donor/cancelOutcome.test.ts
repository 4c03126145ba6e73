import { describe, expect, it } from "vitest";
import { cancelOutcome } from "../../../extension/donor/cancelOutcome";

describe("farmhand.cancelJob's report", () => {
  it("says what the farm did: canceled, cancel requested of a running job, or already finished", () => {
    expect(cancelOutcome({ status: "canceled" })).toBe("the job is canceled");
    expect(cancelOutcome({ status: "running", cancelRequested: true })).toBe(
      "cancel requested: the job is running and stops at its worker's next check-in",
    );
    expect(cancelOutcome({ status: "succeeded" })).toBe("nothing to cancel: the job had already finished (succeeded)");
    expect(cancelOutcome({ status: "dead" })).toBe("nothing to cancel: the job had already finished (dead)");
  });
});
