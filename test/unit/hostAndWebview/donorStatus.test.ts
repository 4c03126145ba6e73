import { describe, expect, it } from "vitest";
import { describeStatus, donorStatus, farmProblemText, TOGGLE_LABEL, toggleAction } from "../../../extension/hostAndWebview/donorStatus";

const donate = { donate: true as const };
const off = { donate: false as const, off: true as const };
const paused = { donate: false as const, reason: "on battery power" };

describe("donor status", () => {
  it("asks to join before anything else", () => {
    expect(donorStatus({ joined: false, decision: donate })).toEqual({ kind: "notJoined" });
  });

  it("shows off, and the policy's pause reason", () => {
    expect(donorStatus({ joined: true, decision: off })).toEqual({ kind: "off" });
    expect(donorStatus({ joined: true, decision: paused })).toEqual({ kind: "paused", reason: "on battery power" });
  });

  it("follows the engine once donating: waiting, working, offline, auto-paused", () => {
    expect(donorStatus({ joined: true, decision: donate })).toEqual({ kind: "waiting" });
    expect(donorStatus({ joined: true, decision: donate, engine: { connected: true, running: 0 } })).toEqual({ kind: "waiting" });
    expect(donorStatus({ joined: true, decision: donate, engine: { connected: true, running: 2 } })).toEqual({ kind: "working", jobs: 2 });
    expect(donorStatus({ joined: true, decision: donate, engine: { connected: false, running: 1 } })).toEqual({ kind: "offline" });
    expect(
      donorStatus({ joined: true, decision: donate, engine: { connected: true, running: 0, pausedReason: "3 jobs failed in a row" } }),
    ).toEqual({ kind: "paused", reason: "3 jobs failed in a row" });
  });

  it("keeps the reason the engine stopped on its own (a revoked key) visible", () => {
    const status = donorStatus({ joined: true, decision: donate, engine: { connected: false, running: 0, stoppedReason: "this worker's key was revoked" } });
    expect(status).toEqual({ kind: "offline", reason: "this worker's key was revoked" });
    expect(describeStatus(status)).toBe("offline: this worker's key was revoked");
  });

  it("describes each state in words", () => {
    expect(describeStatus({ kind: "working", jobs: 1 })).toBe("working (1 job)");
    expect(describeStatus({ kind: "working", jobs: 3 })).toBe("working (3 jobs)");
    expect(describeStatus({ kind: "paused", reason: "snoozed until 15:00" })).toBe("paused: snoozed until 15:00");
    expect(describeStatus({ kind: "waiting" })).toBe("waiting for work");
    expect(describeStatus({ kind: "notJoined" })).toBe("not joined");
  });
});

describe("the toggle's action", () => {
  it("joins, starts, stops, and resumes (not stops) when the engine paused itself", () => {
    expect(toggleAction({ joined: false, wanted: true })).toBe("join");
    expect(toggleAction({ joined: true, wanted: false })).toBe("start");
    expect(toggleAction({ joined: true, wanted: true, engine: { connected: true, running: 1 } })).toBe("stop");
    const autoPaused = { connected: true, running: 0, pausedReason: "auto-paused after 5 failed jobs in a row" };
    expect(toggleAction({ joined: true, wanted: true, engine: autoPaused })).toBe("resume");
    expect(TOGGLE_LABEL.resume).toBe("Resume");
  });
});

describe("why the farm's data is missing", () => {
  it("reads an unreachable farm, a refused key and other errors differently, each with the farm's words", () => {
    expect(farmProblemText({ kind: "unreachable", message: "the farm could not be reached (ECONNREFUSED)" })).toBe(
      "Cannot reach the farm: the farm could not be reached (ECONNREFUSED)",
    );
    expect(farmProblemText({ kind: "refused", message: "This worker key has been revoked" })).toBe(
      "The farm refused this machine's key: This worker key has been revoked. Join again with a new token from your operator.",
    );
    expect(farmProblemText({ kind: "notAllowed", message: "no" })).toBe("This machine's key may not read the farm: no");
    expect(farmProblemText({ kind: "failed", message: "boom" })).toBe("The farm answered with an error: boom");
  });
});
