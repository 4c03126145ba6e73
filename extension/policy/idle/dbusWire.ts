/**
 * The D-Bus wire format, little-endian, as far as the idle and lock probes need it: method calls with string
 * arguments out, any reply body in. Pure functions over buffers, so they are tested on recorded bytes.
 * (Spec: "Message Protocol" in the D-Bus specification.)
 */

export const MESSAGE_TYPE = { methodCall: 1, methodReturn: 2, error: 3, signal: 4 } as const;

const FIELD = { path: 1, interface: 2, member: 3, errorName: 4, replySerial: 5, destination: 6, sender: 7, signature: 8 } as const;

export type Call = { destination: string; path: string; interface: string; member: string; signature?: string; args?: string[] };

export type Message = {
  type: number;
  serial: number;
  replySerial?: number;
  errorName?: string;
  member?: string;
  signature: string;
  body: unknown[];
};

export class WireError extends Error {}

/** A method call: only string-like arguments (`s`, `o`), which is all the probes send. */
export function encodeCall(call: Call, serial: number): Buffer {
  const signature = call.signature ?? "";
  const args = call.args ?? [];
  if (signature.length !== args.length || /[^so]/.test(signature)) throw new WireError(`cannot encode arguments of signature "${signature}"`);
  const body = new Writer();
  args.forEach((arg) => body.string(arg));
  const head = new Writer();
  head.byte(0x6c); // 'l': little-endian
  head.byte(MESSAGE_TYPE.methodCall);
  head.byte(0);
  head.byte(1);
  head.uint32(body.length);
  head.uint32(serial);
  const fields: Array<[number, string, string]> = [
    [FIELD.path, "o", call.path],
    [FIELD.interface, "s", call.interface],
    [FIELD.member, "s", call.member],
    [FIELD.destination, "s", call.destination],
  ];
  if (signature) fields.push([FIELD.signature, "g", signature]);
  const lengthAt = head.length;
  head.uint32(0);
  head.align(8);
  const start = head.length;
  for (const [code, type, value] of fields) {
    head.align(8);
    head.byte(code);
    head.signature(type);
    if (type === "g") head.signature(value);
    else head.string(value);
  }
  head.setUint32(lengthAt, head.length - start);
  head.align(8);
  return Buffer.concat([head.bytes(), body.bytes()]);
}

/** Bytes of the first whole message in `buffer`, or undefined while it has not all arrived. */
export function messageLength(buffer: Buffer): number | undefined {
  if (buffer.length < 16) return undefined;
  if (buffer[0] !== 0x6c) throw new WireError("big-endian messages are not supported");
  const bodyLength = buffer.readUInt32LE(4);
  const fieldsLength = buffer.readUInt32LE(12);
  const total = pad(16 + fieldsLength, 8) + bodyLength;
  return buffer.length >= total ? total : undefined;
}

/** Decode one whole message (as cut by `messageLength`). */
export function decodeMessage(buffer: Buffer): Message {
  if (buffer.length < 16 || buffer[0] !== 0x6c) throw new WireError("not a little-endian D-Bus message");
  const reader = new Reader(buffer);
  reader.offset = 12;
  const fields = reader.value("a(yv)") as Array<[number, unknown]>;
  const field = (code: number) => fields.find(([c]) => c === code)?.[1];
  reader.align(8);
  const signature = (field(FIELD.signature) as string | undefined) ?? "";
  const body: unknown[] = [];
  for (const type of splitSignature(signature)) body.push(reader.value(type));
  return {
    type: buffer[1],
    serial: buffer.readUInt32LE(8),
    replySerial: field(FIELD.replySerial) as number | undefined,
    errorName: field(FIELD.errorName) as string | undefined,
    member: field(FIELD.member) as string | undefined,
    signature,
    body,
  };
}

/** "a{sv}ub" → ["a{sv}", "u", "b"]. */
export function splitSignature(signature: string): string[] {
  const types: string[] = [];
  let i = 0;
  while (i < signature.length) {
    const end = completeTypeEnd(signature, i);
    types.push(signature.slice(i, end));
    i = end;
  }
  return types;
}

function completeTypeEnd(signature: string, start: number): number {
  const c = signature[start];
  if (c === undefined) throw new WireError(`signature "${signature}" ends early`);
  if (c === "a") return completeTypeEnd(signature, start + 1);
  if (c === "(" || c === "{") {
    const close = c === "(" ? ")" : "}";
    let i = start + 1;
    while (signature[i] !== close) {
      if (i >= signature.length) throw new WireError(`signature "${signature}" is not closed`);
      i = completeTypeEnd(signature, i);
    }
    return i + 1;
  }
  if (!("ybnqiuxtdsogvh".includes(c))) throw new WireError(`unknown type "${c}" in signature "${signature}"`);
  return start + 1;
}

const ALIGN: Record<string, number> = { y: 1, b: 4, n: 2, q: 2, i: 4, u: 4, x: 8, t: 8, d: 8, s: 4, o: 4, g: 1, v: 1, h: 4, a: 4, "(": 8, "{": 8 };

class Reader {
  offset = 0;
  constructor(private readonly buffer: Buffer) {}

  align(n: number): void {
    this.offset = pad(this.offset, n);
  }

  private need(bytes: number): void {
    if (this.offset + bytes > this.buffer.length) throw new WireError("message ends inside a value");
  }

  value(type: string): unknown {
    const c = type[0];
    this.align(ALIGN[c] ?? 1);
    const b = this.buffer;
    switch (c) {
      case "y":
        this.need(1);
        return b[this.offset++];
      case "b":
      case "u":
      case "h":
        this.need(4);
        this.offset += 4;
        return c === "b" ? b.readUInt32LE(this.offset - 4) !== 0 : b.readUInt32LE(this.offset - 4);
      case "i":
        this.need(4);
        this.offset += 4;
        return b.readInt32LE(this.offset - 4);
      case "n":
      case "q":
        this.need(2);
        this.offset += 2;
        return c === "n" ? b.readInt16LE(this.offset - 2) : b.readUInt16LE(this.offset - 2);
      case "x":
      case "t":
      case "d":
        this.need(8);
        this.offset += 8;
        if (c === "d") return b.readDoubleLE(this.offset - 8);
        return Number(c === "x" ? b.readBigInt64LE(this.offset - 8) : b.readBigUInt64LE(this.offset - 8));
      case "s":
      case "o": {
        this.need(4);
        const length = b.readUInt32LE(this.offset);
        this.offset += 4;
        this.need(length + 1);
        const text = b.toString("utf8", this.offset, this.offset + length);
        this.offset += length + 1;
        return text;
      }
      case "g": {
        this.need(1);
        const length = b[this.offset++];
        this.need(length + 1);
        const text = b.toString("ascii", this.offset, this.offset + length);
        this.offset += length + 1;
        return text;
      }
      case "v": {
        const inner = this.value("g") as string;
        const types = splitSignature(inner);
        if (types.length !== 1) throw new WireError(`a variant holds one type, not "${inner}"`);
        return this.value(types[0]);
      }
      case "a": {
        this.need(4);
        const length = b.readUInt32LE(this.offset);
        this.offset += 4;
        const element = type.slice(1, completeTypeEnd(type, 1));
        this.align(ALIGN[element[0]] ?? 1);
        const end = this.offset + length;
        if (end > b.length) throw new WireError("array runs past the message");
        const items: unknown[] = [];
        while (this.offset < end) items.push(this.value(element));
        if (element[0] === "{") return Object.fromEntries(items as Array<[string, unknown]>);
        return items;
      }
      case "(":
      case "{":
        return splitSignature(type.slice(1, -1)).map((t) => this.value(t));
      default:
        throw new WireError(`unknown type "${c}"`);
    }
  }
}

class Writer {
  private readonly chunks: number[] = [];

  get length(): number {
    return this.chunks.length;
  }

  byte(n: number): void {
    this.chunks.push(n & 0xff);
  }

  align(n: number): void {
    while (this.chunks.length % n) this.chunks.push(0);
  }

  uint32(n: number): void {
    this.align(4);
    for (let i = 0; i < 4; i++) this.chunks.push((n >>> (8 * i)) & 0xff);
  }

  setUint32(at: number, n: number): void {
    for (let i = 0; i < 4; i++) this.chunks[at + i] = (n >>> (8 * i)) & 0xff;
  }

  string(text: string): void {
    const bytes = Buffer.from(text, "utf8");
    this.uint32(bytes.length);
    for (const b of bytes) this.chunks.push(b);
    this.chunks.push(0);
  }

  signature(text: string): void {
    this.byte(text.length);
    for (const b of Buffer.from(text, "ascii")) this.chunks.push(b);
    this.chunks.push(0);
  }

  bytes(): Buffer {
    return Buffer.from(this.chunks);
  }
}

function pad(offset: number, n: number): number {
  return Math.ceil(offset / n) * n;
}
