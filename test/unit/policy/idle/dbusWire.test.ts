import { describe, expect, it } from "vitest";
import { socketPaths } from "../../../../extension/policy/idle/dbusConnection";
import { decodeMessage, encodeCall, messageLength, splitSignature, WireError } from "../../../../extension/policy/idle/dbusWire";

// Replies recorded from a real dbus-daemon 1.14 (the stand-in desktop of test/engine/idle), as hex.
const RECORDED = {
  idletime: "6c02010108000000050000002d00000006017300040000003a312e35000000000801670001740000050175000200000007017300040000003a312e3400000000eb22000000000000",
  getActive: "6c02010104000000060000002d00000006017300040000003a312e35000000000801670001620000050175000300000007017300040000003a312e340000000001000000",
  logindGetAll:
    "6c02010176000000070000003500000006017300040000003a312e35000000000801670005617b73767d000000000000050175000400000007017300040000003a312e34000000006e000000000000000800000049646c6548696e740001620001000000000000000d00000049646c6553696e636548696e7400017400000000002c447e854406000a0000004c6f636b656448696e7400016200000001000000040000004e616d65000173000d0000006661726d68616e642d7465737400",
  serviceUnknown:
    "6c03010150000000030000007500000006017300040000003a312e350000000004017300290000006f72672e667265656465736b746f702e444275732e4572726f722e53657276696365556e6b6e6f776e000000000000000501750005000000080167000173000007017300140000006f72672e667265656465736b746f702e44427573000000004b000000546865206e616d65206f72672e667265656465736b746f702e53637265656e536176657220776173206e6f742070726f766964656420627920616e79202e736572766963652066696c657300",
};
const bytes = (hex: string) => Buffer.from(hex, "hex");

describe("D-Bus wire format", () => {
  it("reads Mutter's GetIdletime reply (uint64 milliseconds) and its reply serial", () => {
    const m = decodeMessage(bytes(RECORDED.idletime));
    expect(m).toMatchObject({ type: 2, replySerial: 2, signature: "t", body: [8939] });
  });

  it("reads a boolean reply (GetActive: the screen is locked)", () => {
    expect(decodeMessage(bytes(RECORDED.getActive)).body).toEqual([true]);
  });

  it("reads logind's a{sv} session properties, variants and all", () => {
    const m = decodeMessage(bytes(RECORDED.logindGetAll));
    expect(m.body).toEqual([{ IdleHint: true, IdleSinceHint: 1764190000000000, LockedHint: true, Name: "farmhand-test" }]);
  });

  it("reads an error reply's name and text", () => {
    const m = decodeMessage(bytes(RECORDED.serviceUnknown));
    expect(m).toMatchObject({ type: 3, replySerial: 5, errorName: "org.freedesktop.DBus.Error.ServiceUnknown" });
    expect(m.body[0]).toMatch(/was not provided/);
  });

  it("cuts messages out of a stream: nothing until one has all arrived, then exactly its length", () => {
    const one = bytes(RECORDED.getActive);
    const stream = Buffer.concat([one, bytes(RECORDED.idletime)]);
    expect(messageLength(stream.subarray(0, 10))).toBeUndefined();
    expect(messageLength(stream.subarray(0, one.length - 1))).toBeUndefined();
    expect(messageLength(stream)).toBe(one.length);
  });

  it("encodes a method call the decoder reads back, string arguments aligned", () => {
    const call = { destination: "org.freedesktop.login1", path: "/org/freedesktop/login1/session/auto", interface: "org.freedesktop.DBus.Properties", member: "GetAll", signature: "s", args: ["org.freedesktop.login1.Session"] };
    const encoded = encodeCall(call, 7);
    expect(messageLength(encoded)).toBe(encoded.length);
    expect(decodeMessage(encoded)).toMatchObject({ type: 1, serial: 7, member: "GetAll", signature: "s", body: ["org.freedesktop.login1.Session"] });
  });

  it("refuses to encode arguments it does not support", () => {
    expect(() => encodeCall({ destination: "a.b", path: "/", interface: "a.b", member: "M", signature: "u", args: ["1"] }, 1)).toThrow(WireError);
  });

  it("throws a WireError on garbage, truncation and big-endian messages, never returns a wrong value", () => {
    const reply = bytes(RECORDED.logindGetAll);
    expect(() => decodeMessage(reply.subarray(0, reply.length - 20))).toThrow(WireError);
    expect(() => decodeMessage(Buffer.from("not a dbus message at all"))).toThrow(WireError);
    const bigEndian = Buffer.from(reply);
    bigEndian[0] = 0x42;
    expect(() => messageLength(bigEndian)).toThrow(WireError);
  });

  it("splits signatures into complete types", () => {
    expect(splitSignature("a{sv}ub(tt)")).toEqual(["a{sv}", "u", "b", "(tt)"]);
    expect(() => splitSignature("a{sv")).toThrow(WireError);
    expect(() => splitSignature("z")).toThrow(WireError);
  });
});

describe("bus addresses", () => {
  it("reads unix path and abstract sockets, percent-escapes undone, other transports skipped", () => {
    expect(socketPaths("unix:path=/run/user/1000/bus")).toEqual(["/run/user/1000/bus"]);
    expect(socketPaths("unix:abstract=/tmp/dbus-x,guid=1;tcp:host=h,port=1;unix:path=/tmp/a%20b")).toEqual(["\0/tmp/dbus-x", "/tmp/a b"]);
    expect(socketPaths("tcp:host=localhost,port=1")).toEqual([]);
    expect(socketPaths(undefined)).toEqual([]);
  });
});
