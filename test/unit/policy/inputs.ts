import type { PolicyInputs } from "../../../extension/policy/policy";

/** Policy inputs where nothing stands in the way of donating; override what a test is about. */
export function policyInputs(overrides: Partial<PolicyInputs> = {}): PolicyInputs {
  return {
    now: new Date(2026, 10, 18, 14, 0).getTime(), // a Wednesday, 14:00 local
    wanted: true,
    remoteWindow: false,
    allowRemote: false,
    otherWindowDonates: false,
    windows: [],
    onBattery: false,
    donateOnBattery: false,
    userIdleMs: 10 * 60_000,
    idleMinutes: 5,
    cpuBusy: false,
    ...overrides,
  };
}
