import type { Socket } from "node:net";
import { socketHandshake } from "./socketHandshake";
import { decodeMessage, encodeCall, MESSAGE_TYPE, messageLength, type Call } from "./dbusWire";

/**
 * One long-lived connection to a D-Bus bus over its Unix socket, speaking the wire protocol itself: a poll is one
 * message each way on an open socket, not a `gdbus` process per poll, and no npm dependency.
 */
class DBusError extends Error {
  constructor(
    message: string,
    readonly name = "farmhand.DBusError",
  ) {
    super(message);
  }
}

const CALL_TIMEOUT_MS = 2_000;

/** `unix:path=…` and `unix:abstract=…` entries of a bus address (others, like tcp, are not used). */
export function socketPaths(address: string | undefined): string[] {
  if (!address) return [];
  const paths: string[] = [];
  for (const entry of address.split(";")) {
    const [transport, rest = ""] = entry.split(/:(.*)/s);
    if (transport !== "unix") continue;
    const keys = Object.fromEntries(rest.split(",").map((kv) => kv.split(/=(.*)/s)).map(([k, v]) => [k, decodeURIComponent(v ?? "")]));
    if (keys.path) paths.push(keys.path);
    else if (keys.abstract) paths.push("\0" + keys.abstract);
  }
  return paths;
}

export function sessionBusAddress(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.DBUS_SESSION_BUS_ADDRESS ?? (env.XDG_RUNTIME_DIR ? `unix:path=${env.XDG_RUNTIME_DIR}/bus` : undefined);
}

export function systemBusAddress(env: NodeJS.ProcessEnv = process.env): string {
  return env.DBUS_SYSTEM_BUS_ADDRESS ?? "unix:path=/var/run/dbus/system_bus_socket";
}

export class DBusConnection {
  private buffer: Buffer = Buffer.alloc(0);
  private serial = 0;
  private readonly pending = new Map<number, { resolve(body: unknown[]): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> }>();
  private closedWith: Error | undefined;

  private constructor(private readonly socket: Socket) {
    socket.on("data", (chunk) => this.receive(chunk));
    socket.on("error", (e) => this.fail(new DBusError(`bus connection failed: ${e.message}`)));
    socket.on("close", () => this.fail(new DBusError("bus connection closed")));
  }

  /** Connect, authenticate as this user (EXTERNAL) and say Hello; rejects when no bus answers. */
  static async open(address: string | undefined, uid = process.getuid?.() ?? 0): Promise<DBusConnection> {
    const paths = socketPaths(address);
    if (paths.length === 0) throw new DBusError(`no usable unix socket in the bus address ${JSON.stringify(address ?? "")}`);
    let last: Error | undefined;
    for (const path of paths) {
      try {
        const socket = await authenticated(path, uid);
        // A probe's connection never keeps a process alive on its own.
        socket.unref();
        const connection = new DBusConnection(socket);
        await connection.call({ destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "Hello" });
        return connection;
      } catch (e) {
        last = e as Error;
      }
    }
    throw last ?? new DBusError("no bus");
  }

  get closed(): boolean {
    return this.closedWith !== undefined;
  }

  /** Call a method; resolves with the reply's body values, rejects with the bus's error name and text. */
  call(call: Call, timeoutMs = CALL_TIMEOUT_MS): Promise<unknown[]> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const serial = ++this.serial;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(serial);
        reject(new DBusError(`${call.interface}.${call.member} did not answer within ${timeoutMs} ms`, "farmhand.Timeout"));
      }, timeoutMs);
      this.pending.set(serial, { resolve, reject, timer });
      this.socket.write(encodeCall(call, serial));
    });
  }

  close(): void {
    this.socket.destroy();
    this.fail(new DBusError("bus connection closed"));
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    try {
      for (let length = messageLength(this.buffer); length !== undefined; length = messageLength(this.buffer)) {
        const message = decodeMessage(this.buffer.subarray(0, length));
        this.buffer = this.buffer.subarray(length);
        if (message.type !== MESSAGE_TYPE.methodReturn && message.type !== MESSAGE_TYPE.error) continue;
        const waiting = message.replySerial === undefined ? undefined : this.pending.get(message.replySerial);
        if (!waiting) continue;
        this.pending.delete(message.replySerial!);
        clearTimeout(waiting.timer);
        if (message.type === MESSAGE_TYPE.methodReturn) waiting.resolve(message.body);
        else waiting.reject(new DBusError(typeof message.body[0] === "string" ? message.body[0] : (message.errorName ?? "error"), message.errorName));
      }
    } catch (e) {
      this.socket.destroy();
      this.fail(new DBusError(`unreadable message from the bus: ${(e as Error).message}`));
    }
  }

  private fail(error: Error): void {
    this.closedWith ??= error;
    for (const waiting of this.pending.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(this.closedWith);
    }
    this.pending.clear();
  }
}

/** The SASL exchange: a NUL byte, `AUTH EXTERNAL <uid as hex of its decimal text>`, `OK <guid>`, `BEGIN`. */
async function authenticated(path: string, uid: number): Promise<Socket> {
  const { socket } = await socketHandshake({
    path,
    greeting: `\0AUTH EXTERNAL ${Buffer.from(String(uid)).toString("hex")}\r\n`,
    answer: (received) => {
      const text = received.toString("latin1");
      if (!text.includes("\r\n")) return undefined;
      if (!text.startsWith("OK ")) throw new Error(text.trim());
      return true;
    },
    timeoutMs: CALL_TIMEOUT_MS,
    failure: (why) =>
      new DBusError(
        "timedOut" in why
          ? `the bus at ${path} did not authenticate within ${CALL_TIMEOUT_MS} ms`
          : "connectError" in why
            ? `cannot connect to the bus at ${path}: ${why.connectError}`
            : `the bus refused authentication: ${why.refused}`,
      ),
  });
  socket.write("BEGIN\r\n");
  return socket;
}
