import { createConnection, type Socket } from "node:net";

type Handshake<T> = {
  /** The unix socket (a leading NUL is Linux's abstract namespace). */
  path: string;
  /** What the client says first. */
  greeting: string | Buffer;
  /** Reads what arrived so far: undefined while the answer is incomplete; throws when it is a refusal. */
  answer: (received: Buffer) => T | undefined;
  timeoutMs: number;
  /** The error to reject with: a timeout, a failed connection (its system message), or a refused answer. */
  failure: (why: { timedOut: true } | { connectError: string } | { refused: string }) => Error;
};

/**
 * Connect to a local socket, send a greeting and wait for the complete answer (D-Bus's SASL exchange, X11's
 * connection setup). Resolves with the still-open socket and what the answer said; on any failure the socket is
 * destroyed, so a dead or silent server never leaves a descriptor behind.
 */
export function socketHandshake<T>(h: Handshake<T>): Promise<{ socket: Socket; answer: T }> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ path: h.path });
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => fail(h.failure({ timedOut: true })), h.timeoutMs);
    const detach = () => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("error", onError);
    };
    const fail = (error: Error) => {
      detach();
      socket.destroy();
      reject(error);
    };
    const onError = (e: Error) => fail(h.failure({ connectError: e.message }));
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      let answer: T | undefined;
      try {
        answer = h.answer(received);
      } catch (e) {
        return fail(h.failure({ refused: (e as Error).message }));
      }
      if (answer === undefined) return;
      detach();
      resolve({ socket, answer });
    };
    socket.on("data", onData);
    socket.on("error", onError);
    socket.write(h.greeting);
  });
}
