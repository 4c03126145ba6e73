import { describe, expect, it } from "vitest";
import { DonationSwitch, type DonationState } from "../../../extension/policy/donationSwitch";

describe("DonationSwitch", () => {
  it("starts off and toggles on and off", () => {
    const donation = new DonationSwitch();
    expect(donation.state).toEqual({ kind: "off" });
    expect(donation.toggle()).toEqual({ kind: "on" });
    expect(donation.donating).toBe(true);
    expect(donation.toggle()).toEqual({ kind: "off" });
    expect(donation.donating).toBe(false);
  });

  it("pauses with a reason in a remote window that is not allowed, and resumes when allowed", () => {
    const donation = new DonationSwitch();
    donation.updateFacts({ remoteNotAllowed: true });
    const paused = donation.set(true);
    expect(paused.kind).toBe("paused");
    expect(paused.kind === "paused" && paused.reason).toMatch(/remote window/);
    expect(donation.donating).toBe(false);
    expect(donation.updateFacts({ remoteNotAllowed: false })).toEqual({ kind: "on" });
  });

  it("tells listeners about every change until they unsubscribe", () => {
    const donation = new DonationSwitch();
    const seen: DonationState["kind"][] = [];
    const subscription = donation.onDidChange((s) => seen.push(s.kind));
    donation.toggle();
    donation.toggle();
    subscription.dispose();
    donation.toggle();
    expect(seen).toEqual(["on", "off"]);
  });
});
