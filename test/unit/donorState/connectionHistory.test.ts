import { describe, expect, it } from "vitest";
import { connectionChanged, firstConnectMissed, opened, type ConnectionHistory } from "../../../extension/donorState/connectionHistory";

const never: ConnectionHistory = { kind: "never", since: 100 };
const online: ConnectionHistory = { kind: "online" };
const down: ConnectionHistory = { kind: "down", since: 200 };

describe("ConnectionHistory, one transition per test", () => {
  it("opened: never up, waiting since now", () => {
    expect(opened(100)).toEqual(never);
  });

  it.each([never, online, down])("up from %o: online", (from) => {
    expect(connectionChanged(from, true, 500)).toEqual(online);
  });

  it("online, then down: down from now", () => {
    expect(connectionChanged(online, false, 500)).toEqual({ kind: "down", since: 500 });
  });

  it("down again while down: keeps the time it was lost", () => {
    expect(connectionChanged(down, false, 500)).toEqual(down);
  });

  it("down while never up: still never up, still waiting since it was opened", () => {
    expect(connectionChanged(never, false, 500)).toEqual(never);
  });

  it("the first connection missed: a never-up connection is down since it was opened", () => {
    expect(firstConnectMissed(never)).toEqual({ kind: "down", since: 100 });
  });

  it.each([online, down])("the first connection missed after %o: nothing changes", (from) => {
    expect(firstConnectMissed(from)).toEqual(from);
  });
});
