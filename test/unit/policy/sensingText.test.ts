import { describe, expect, it } from "vitest";
import { sensingText } from "../../../extension/policy/sensingText";

describe("what the policy senses, in words", () => {
  it("names the idle source in use, or says VS Code activity alone judges idle", () => {
    expect(sensingText({ idleSource: "GNOME Mutter IdleMonitor (D-Bus)" })).toBe("idle read from GNOME Mutter IdleMonitor (D-Bus)");
    expect(sensingText({ idleSource: null })).toBe("idle is judged by VS Code activity only on this machine");
    expect(sensingText({ idleSource: undefined })).toBeUndefined();
  });
});
