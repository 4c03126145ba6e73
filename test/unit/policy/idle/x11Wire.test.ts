import { describe, expect, it } from "vitest";
import {
  cookieFor,
  getPropertyRequest,
  internAtomRequest,
  messageLength,
  parseInternAtomReply,
  parsePropertyWords,
  parseDisplay,
  parseQueryExtensionReply,
  parseScreenSaverInfoReply,
  parseSetupReply,
  parseXauthority,
  queryExtensionRequest,
  screenSaverQueryInfoRequest,
  setupReplyLength,
  setupRequest,
  X11WireError,
} from "../../../../extension/policy/idle/x11Wire";

// Recorded from Xvfb 21.1.7 (Debian 12): the first 148 bytes of its 9,556-byte setup reply, and three replies.
const SETUP_START =
  "01000b00000053098fa5b80000002000ffff1f00000100001400ffff01060000202008ff0000000054686520582e4f726720466f756e646174696f6e0101200000000000040820000000000008082000000000001010200000000000182020000000000020202000000000000d05000020000000ffffff0000000000000000000005000445010401010001002100000001001806";
const QUERY_EXTENSION = "010001000000000001905c000000000000000000000000000000000000000000";
const QUERY_EXTENSION_ABSENT = "0100030000000000000000000000000000000000000000000000000000000000";
const QUERY_INFO = "01000200000000000c050000c020090000070000000000000000000000000000";
const bytes = (hex: string) => Buffer.from(hex, "hex");

describe("X11 wire format", () => {
  it("finds the first screen's root window in the setup reply (after the vendor and the pixmap formats)", () => {
    expect(parseSetupReply(bytes(SETUP_START))).toBe(0x50d);
  });

  it("waits for the whole setup reply by its length field", () => {
    expect(setupReplyLength(bytes(SETUP_START))).toBeUndefined(); // 9,556 bytes announced, 148 here
    expect(setupReplyLength(bytes(SETUP_START).subarray(0, 5))).toBeUndefined();
  });

  it("says why the server refused, and rejects what is not a setup reply", () => {
    const reason = "No protocol specified\n";
    const refused = Buffer.alloc(8 + 24);
    refused[0] = 0;
    refused[1] = reason.length;
    refused.write(reason, 8, "latin1");
    expect(() => parseSetupReply(refused)).toThrow(/refused the connection: No protocol specified/);
    expect(() => parseSetupReply(Buffer.from([2, 0, 0, 0, 0, 0, 0, 0]))).toThrow(X11WireError);
    expect(() => parseSetupReply(Buffer.from("garbage"))).toThrow(X11WireError);
    expect(() => parseSetupReply(bytes(SETUP_START).subarray(0, 100))).toThrow(/no screen/);
  });

  it("reads MIT-SCREEN-SAVER's opcode, and its absence", () => {
    expect(parseQueryExtensionReply(bytes(QUERY_EXTENSION))).toBe(0x90);
    expect(parseQueryExtensionReply(bytes(QUERY_EXTENSION_ABSENT))).toBeUndefined();
  });

  it("reads the milliseconds since the last input and the screen saver's state", () => {
    expect(parseScreenSaverInfoReply(bytes(QUERY_INFO))).toEqual({ idleMs: 0x700, saverOn: false });
    const on = bytes(QUERY_INFO);
    on[1] = 1;
    expect(parseScreenSaverInfoReply(on).saverOn).toBe(true);
  });

  it("an X11 error or a short reply is an error, not a reading", () => {
    const error = Buffer.alloc(32);
    error[1] = 17; // BadImplementation
    expect(() => parseScreenSaverInfoReply(error)).toThrow(/X11 error 17/);
    expect(() => parseScreenSaverInfoReply(Buffer.alloc(10, 1))).toThrow(X11WireError);
  });

  it("cuts replies (with their extra words) and events out of a stream", () => {
    const withExtra = Buffer.alloc(40);
    withExtra[0] = 1;
    withExtra.writeUInt32LE(2, 4);
    expect(messageLength(withExtra)).toBe(40);
    expect(messageLength(withExtra.subarray(0, 36))).toBeUndefined();
    const event = Buffer.alloc(32, 0);
    event[0] = 12; // Expose
    expect(messageLength(event)).toBe(32);
  });

  it("encodes requests with their lengths in 4-byte units", () => {
    const q = queryExtensionRequest("MIT-SCREEN-SAVER");
    expect(q.length).toBe(24);
    expect([q[0], q.readUInt16LE(2), q.readUInt16LE(4), q.toString("latin1", 8, 24)]).toEqual([98, 6, 16, "MIT-SCREEN-SAVER"]);
    const info = screenSaverQueryInfoRequest(0x90, 0x50d);
    expect([...info]).toEqual([0x90, 1, 2, 0, 0x0d, 0x05, 0, 0]);
    const setup = setupRequest({ name: "MIT-MAGIC-COOKIE-1", data: Buffer.alloc(16, 7) });
    expect(setup.length).toBe(12 + 20 + 16);
    expect([setup[0], setup.readUInt16LE(2), setup.readUInt16LE(6), setup.readUInt16LE(8)]).toEqual([0x6c, 11, 18, 16]);
  });
});

describe("EWMH: the active window and its state", () => {
  it("asks for atoms without creating them, and reads the atom back", () => {
    const q = internAtomRequest("_NET_WM_STATE");
    expect([q[0], q[1], q.readUInt16LE(2), q.readUInt16LE(4)]).toEqual([16, 1, 2 + 16 / 4, 13]);
    const reply = Buffer.alloc(32);
    reply[0] = 1;
    reply.writeUInt32LE(344, 8);
    expect(parseInternAtomReply(reply)).toBe(344);
  });

  it("reads a property's 32-bit values; a property of another format, or absent, is none", () => {
    const g = getPropertyRequest(0x50d, 344, 1);
    expect([g[0], g.readUInt16LE(2), g.readUInt32LE(4), g.readUInt32LE(8), g.readUInt32LE(20)]).toEqual([20, 6, 0x50d, 344, 1]);
    const reply = Buffer.alloc(40);
    reply[0] = 1;
    reply[1] = 32;
    reply.writeUInt32LE(2, 4);
    reply.writeUInt32LE(2, 16);
    reply.writeUInt32LE(345, 32);
    reply.writeUInt32LE(346, 36);
    expect(parsePropertyWords(reply)).toEqual([345, 346]);
    const absent = Buffer.alloc(32);
    absent[0] = 1;
    expect(parsePropertyWords(absent)).toEqual([]);
    const lying = Buffer.from(reply.subarray(0, 36));
    expect(() => parsePropertyWords(lying)).toThrow(X11WireError);
  });
});

describe("DISPLAY and .Xauthority", () => {
  it("takes local displays only", () => {
    expect(parseDisplay(":0")).toBe(0);
    expect(parseDisplay(":12.0")).toBe(12);
    expect(parseDisplay("unix:3")).toBe(3);
    expect(parseDisplay("localhost:10.0")).toBeUndefined(); // SSH forwarding: TCP, left to xprintidle
    expect(parseDisplay("")).toBeUndefined();
    expect(parseDisplay(undefined)).toBeUndefined();
  });

  const entry = (family: number, address: string, display: string, name: string, data: Buffer) => {
    const field = (b: Buffer) => Buffer.concat([Buffer.from([b.length >> 8, b.length & 0xff]), b]);
    return Buffer.concat([Buffer.from([family >> 8, family & 0xff]), field(Buffer.from(address)), field(Buffer.from(display)), field(Buffer.from(name)), field(data)]);
  };

  it("picks this host's MIT-MAGIC-COOKIE-1 for the display", () => {
    const file = Buffer.concat([
      entry(256, "otherhost", "0", "MIT-MAGIC-COOKIE-1", Buffer.alloc(16, 1)),
      entry(256, "myhost", "1", "MIT-MAGIC-COOKIE-1", Buffer.alloc(16, 2)),
      entry(256, "myhost", "0", "XDM-AUTHORIZATION-1", Buffer.alloc(16, 3)),
      entry(256, "myhost", "0", "MIT-MAGIC-COOKIE-1", Buffer.alloc(16, 4)),
    ]);
    const entries = parseXauthority(file);
    expect(entries).toHaveLength(4);
    expect(cookieFor(entries, 0, "myhost")?.data).toEqual(Buffer.alloc(16, 4));
    expect(cookieFor(entries, 1, "myhost")?.data).toEqual(Buffer.alloc(16, 2));
    expect(cookieFor(entries, 5, "myhost")).toBeUndefined();
  });

  it("throws on a truncated file", () => {
    const file = entry(256, "myhost", "0", "MIT-MAGIC-COOKIE-1", Buffer.alloc(16, 4));
    expect(() => parseXauthority(file.subarray(0, file.length - 3))).toThrow(X11WireError);
    expect(parseXauthority(Buffer.alloc(0))).toEqual([]);
  });
});
