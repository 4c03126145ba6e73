/**
 * The few pieces of the X11 protocol (little-endian) the XScreenSaver idle probe needs: the connection setup, the
 * MIT-SCREEN-SAVER extension's opcode and its QueryInfo. Pure functions over buffers, tested on recorded bytes.
 */

export class X11WireError extends Error {}

/** `DISPLAY` → the local socket's display number, or undefined for a remote (TCP) display this probe does not use. */
export function parseDisplay(display: string | undefined): number | undefined {
  const match = display && /^(unix|localhost-unix|)?:(\d+)(?:\.\d+)?$/.exec(display.trim());
  return match ? Number(match[2]) : undefined;
}

/** One entry of an .Xauthority file. */
export type XauthEntry = { family: number; address: string; display: string; name: string; data: Buffer };

/** .Xauthority: entries of family (u16 BE), then address, display number, auth name, auth data (each u16 BE length + bytes). */
export function parseXauthority(file: Buffer): XauthEntry[] {
  const entries: XauthEntry[] = [];
  let at = 0;
  const field = (): Buffer => {
    if (at + 2 > file.length) throw new X11WireError(".Xauthority ends inside an entry");
    const length = file.readUInt16BE(at);
    if (at + 2 + length > file.length) throw new X11WireError(".Xauthority ends inside an entry");
    const value = file.subarray(at + 2, at + 2 + length);
    at += 2 + length;
    return value;
  };
  while (at < file.length) {
    if (at + 2 > file.length) throw new X11WireError(".Xauthority ends inside an entry");
    const family = file.readUInt16BE(at);
    at += 2;
    const address = field().toString("latin1");
    const display = field().toString("latin1");
    const name = field().toString("latin1");
    entries.push({ family, address, display, name, data: Buffer.from(field()) });
  }
  return entries;
}

const FAMILY_LOCAL = 256;
const FAMILY_WILD = 65535;
const COOKIE = "MIT-MAGIC-COOKIE-1";

/** The cookie for a local display: this host's entry first, then a wildcard one. */
export function cookieFor(entries: XauthEntry[], display: number, host: string): { name: string; data: Buffer } | undefined {
  const usable = entries.filter((e) => e.name === COOKIE && (e.display === String(display) || e.display === ""));
  const best = usable.find((e) => e.family === FAMILY_LOCAL && e.address === host) ?? usable.find((e) => e.family === FAMILY_WILD || e.family === FAMILY_LOCAL);
  return best && { name: best.name, data: best.data };
}

export function setupRequest(auth?: { name: string; data: Buffer }): Buffer {
  const name = Buffer.from(auth?.name ?? "", "latin1");
  const data = auth?.data ?? Buffer.alloc(0);
  const head = Buffer.alloc(12);
  head[0] = 0x6c; // 'l': little-endian
  head.writeUInt16LE(11, 2);
  head.writeUInt16LE(0, 4);
  head.writeUInt16LE(name.length, 6);
  head.writeUInt16LE(data.length, 8);
  return Buffer.concat([head, padded(name), padded(data)]);
}

/** Bytes of the setup reply once it has all arrived (8 + 4 × its length field). */
export function setupReplyLength(buffer: Buffer): number | undefined {
  if (buffer.length < 8) return undefined;
  const total = 8 + 4 * buffer.readUInt16LE(6);
  return buffer.length >= total ? total : undefined;
}

/** The setup reply → the first screen's root window, or why the server refused. */
export function parseSetupReply(reply: Buffer): number {
  if (reply[0] === 0) throw new X11WireError(`the X server refused the connection: ${reply.toString("latin1", 8, 8 + reply[1])}`);
  if (reply[0] === 2) throw new X11WireError("the X server asks for more authentication than a cookie");
  if (reply[0] !== 1 || reply.length < 40) throw new X11WireError("not an X11 setup reply");
  const vendorLength = reply.readUInt16LE(24);
  const formats = reply[29];
  const rootAt = 40 + pad4(vendorLength) + 8 * formats;
  if (reply[28] < 1 || rootAt + 4 > reply.length) throw new X11WireError("the X server lists no screen");
  return reply.readUInt32LE(rootAt);
}

export function queryExtensionRequest(name: string): Buffer {
  const bytes = Buffer.from(name, "latin1");
  const head = Buffer.alloc(8);
  head[0] = 98; // QueryExtension
  head.writeUInt16LE(2 + pad4(bytes.length) / 4, 2);
  head.writeUInt16LE(bytes.length, 4);
  return Buffer.concat([head, padded(bytes)]);
}

/** QueryExtension's reply → the extension's major opcode, or undefined when the server lacks it. */
export function parseQueryExtensionReply(reply: Buffer): number | undefined {
  checkReply(reply);
  return reply[8] ? reply[9] : undefined;
}

export function screenSaverQueryInfoRequest(majorOpcode: number, root: number): Buffer {
  const request = Buffer.alloc(8);
  request[0] = majorOpcode;
  request[1] = 1; // ScreenSaverQueryInfo
  request.writeUInt16LE(2, 2);
  request.writeUInt32LE(root, 4);
  return request;
}

/** ScreenSaverQueryInfo's reply: milliseconds since the last input, and whether the screen saver is on. */
export function parseScreenSaverInfoReply(reply: Buffer): { idleMs: number; saverOn: boolean } {
  checkReply(reply);
  return { idleMs: reply.readUInt32LE(16), saverOn: reply[1] === 1 };
}

export function internAtomRequest(name: string): Buffer {
  const bytes = Buffer.from(name, "latin1");
  const head = Buffer.alloc(8);
  head[0] = 16; // InternAtom
  head[1] = 1; // only if it exists: never create atoms on the donor's display
  head.writeUInt16LE(2 + pad4(bytes.length) / 4, 2);
  head.writeUInt16LE(bytes.length, 4);
  return Buffer.concat([head, padded(bytes)]);
}

/** InternAtom's reply → the atom (0: no such atom on this display). */
export function parseInternAtomReply(reply: Buffer): number {
  checkReply(reply);
  return reply.readUInt32LE(8);
}

/** GetProperty of up to `words` 32-bit values, of any type. */
export function getPropertyRequest(window: number, property: number, words = 32): Buffer {
  const request = Buffer.alloc(24);
  request[0] = 20; // GetProperty
  request.writeUInt16LE(6, 2);
  request.writeUInt32LE(window, 4);
  request.writeUInt32LE(property, 8);
  request.writeUInt32LE(0, 12); // AnyPropertyType
  request.writeUInt32LE(0, 16);
  request.writeUInt32LE(words, 20);
  return request;
}

/** GetProperty's reply → its 32-bit values (windows, atoms); empty when the property is absent or not 32-bit. */
export function parsePropertyWords(reply: Buffer): number[] {
  checkReply(reply);
  if (reply[1] !== 32) return [];
  const count = reply.readUInt32LE(16);
  if (32 + 4 * count > reply.length) throw new X11WireError("GetProperty reply shorter than its values");
  return Array.from({ length: count }, (_, i) => reply.readUInt32LE(32 + 4 * i));
}

/** Length of the first whole reply, error or event in `buffer` (replies and generic events carry extra words). */
export function messageLength(buffer: Buffer): number | undefined {
  if (buffer.length < 32) return undefined;
  const kind = buffer[0] & 0x7f;
  const total = kind === 1 || kind === 35 ? 32 + 4 * buffer.readUInt32LE(4) : 32;
  return buffer.length >= total ? total : undefined;
}

function checkReply(reply: Buffer): void {
  if (reply.length < 32) throw new X11WireError("X11 reply too short");
  if (reply[0] === 0) throw new X11WireError(`X11 error ${reply[1]}`);
  if (reply[0] !== 1) throw new X11WireError("not an X11 reply");
}

function pad4(n: number): number {
  return Math.ceil(n / 4) * 4;
}

function padded(bytes: Buffer): Buffer {
  return Buffer.concat([bytes, Buffer.alloc(pad4(bytes.length) - bytes.length)]);
}
