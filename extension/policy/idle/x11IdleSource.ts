import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import { socketHandshake } from "./socketHandshake";
import { homedir, hostname } from "node:os";
import { join } from "node:path";
import { IdleSourceError, type IdleReading, type IdleSource } from "./idleSource";
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
} from "./x11Wire";

const TIMEOUT_MS = 2_000;

/**
 * X11 without a desktop idle service: the XScreenSaver extension's idle time on ONE long-lived connection to the
 * local X server, speaking the protocol itself (no native binding, no process per read). The screen saver being on
 * counts as away; a screen locker is just another client, so a lock is not seen otherwise. The active window in
 * fullscreen (EWMH `_NET_WM_STATE_FULLSCREEN`: a video, a game, a presentation) counts as the owner being there.
 */
export class X11IdleSource implements IdleSource {
  readonly name = "X11 XScreenSaver";
  readonly fastPollMs = 500;
  private connection: Promise<X11Connection> | undefined;

  constructor(
    private readonly display: string | undefined,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  async read(): Promise<IdleReading> {
    this.connection ??= X11Connection.open(this.display, this.env);
    const connection = await this.connection;
    const { idleMs, saverOn } = await connection.queryInfo();
    const fullscreen = await connection.activeWindowFullscreen();
    return { idleMs, ...(saverOn ? { locked: true } : {}), ...(fullscreen ? { fullscreen } : {}) };
  }

  dispose(): void {
    void this.connection?.then((c) => c.close()).catch(() => undefined);
    this.connection = undefined;
  }
}

class X11Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly waiting: Array<{ resolve(reply: Buffer): void; reject(e: Error): void }> = [];
  private failed: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    private readonly root: number,
    private opcode = 0,
  ) {
    socket.on("data", (chunk) => this.receive(chunk));
    socket.on("error", (e) => this.fail(new IdleSourceError(`X11 connection failed: ${e.message}`)));
    socket.on("close", () => this.fail(new IdleSourceError("X11 connection closed")));
  }

  static async open(display: string | undefined, env: NodeJS.ProcessEnv): Promise<X11Connection> {
    const number = parseDisplay(display);
    if (number === undefined) throw new IdleSourceError(`X11: no local display in DISPLAY=${JSON.stringify(display ?? "")}`);
    const auth = readCookie(number, env);
    let last: Error | undefined;
    // Abstract socket first (Linux), then the file in /tmp/.X11-unix.
    for (const path of [`\0/tmp/.X11-unix/X${number}`, `/tmp/.X11-unix/X${number}`]) {
      try {
        const { socket, root } = await handshake(path, auth);
        socket.unref();
        const connection = new X11Connection(socket, root);
        const opcode = parseQueryExtensionReply(await connection.request(queryExtensionRequest("MIT-SCREEN-SAVER")));
        if (opcode === undefined) {
          connection.close();
          throw new IdleSourceError("X11: the server has no MIT-SCREEN-SAVER extension");
        }
        connection.opcode = opcode;
        return connection;
      } catch (e) {
        last = e as Error;
        if (e instanceof IdleSourceError && /MIT-SCREEN-SAVER/.test(e.message)) break;
      }
    }
    throw last ?? new IdleSourceError("X11: no connection");
  }

  async queryInfo(): Promise<{ idleMs: number; saverOn: boolean }> {
    return parseScreenSaverInfoReply(await this.request(screenSaverQueryInfoRequest(this.opcode, this.root)));
  }

  private atoms: { active: number; state: number; fullscreen: number } | undefined;

  /** Is the active window fullscreen? False without a window manager that says (EWMH), or on any X error. */
  async activeWindowFullscreen(): Promise<boolean> {
    try {
      // Asked again until the window manager has made all three (only-if-exists: we never create atoms).
      if (!this.atoms?.active || !this.atoms.state || !this.atoms.fullscreen) this.atoms = {
        active: parseInternAtomReply(await this.request(internAtomRequest("_NET_ACTIVE_WINDOW"))),
        state: parseInternAtomReply(await this.request(internAtomRequest("_NET_WM_STATE"))),
        fullscreen: parseInternAtomReply(await this.request(internAtomRequest("_NET_WM_STATE_FULLSCREEN"))),
      };
      const { active, state, fullscreen } = this.atoms;
      if (!active || !state || !fullscreen) return false;
      const [window] = parsePropertyWords(await this.request(getPropertyRequest(this.root, active, 1)));
      if (!window) return false;
      return parsePropertyWords(await this.request(getPropertyRequest(window, state))).includes(fullscreen);
    } catch {
      return false; // the window went away between the two questions (BadWindow), or garbage
    }
  }

  close(): void {
    this.socket.destroy();
    this.fail(new IdleSourceError("X11 connection closed"));
  }

  /** Every request sent here has a reply, and replies come in order: the first waiting request takes the next one. */
  private request(bytes: Buffer): Promise<Buffer> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.fail(new IdleSourceError(`X11 server did not answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      this.waiting.push({
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.socket.write(bytes);
    });
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (let length = messageLength(this.buffer); length !== undefined; length = messageLength(this.buffer)) {
      const message = this.buffer.subarray(0, length);
      this.buffer = this.buffer.subarray(length);
      // 0: an error for the oldest request; 1: its reply; anything else is an event nobody asked for.
      if (message[0] <= 1) this.waiting.shift()?.resolve(Buffer.from(message));
    }
  }

  private fail(error: Error): void {
    this.failed ??= error;
    this.socket.destroy();
    for (const w of this.waiting.splice(0)) w.reject(this.failed);
  }
}

function readCookie(display: number, env: NodeJS.ProcessEnv): { name: string; data: Buffer } | undefined {
  try {
    const file = env.XAUTHORITY ?? join(env.HOME ?? homedir(), ".Xauthority");
    return cookieFor(parseXauthority(readFileSync(file)), display, hostname());
  } catch {
    return undefined; // no file, unreadable or garbage: try without a cookie (the server may allow this user)
  }
}

async function handshake(path: string, auth: { name: string; data: Buffer } | undefined): Promise<{ socket: Socket; root: number }> {
  const where = path.replace("\0", "@");
  const { socket, answer } = await socketHandshake({
    path,
    greeting: setupRequest(auth),
    answer: (received) => {
      const length = setupReplyLength(received);
      return length === undefined ? undefined : parseSetupReply(received.subarray(0, length));
    },
    timeoutMs: TIMEOUT_MS,
    failure: (why) =>
      new IdleSourceError(
        "timedOut" in why
          ? `X11 server at ${where} did not answer the setup`
          : "connectError" in why
            ? `cannot connect to the X server at ${where}: ${why.connectError}`
            : why.refused,
      ),
  });
  return { socket, root: answer };
}
