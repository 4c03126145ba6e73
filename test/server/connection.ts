// One WebSocket client connection: its query set, identity version and the last state version it was sent.
import type { WebSocket } from "ws";
import { transitionMessage, type QueryId, type StateModification, type StateVersion } from "./protocol";
import type { Subscription } from "./queryCache";

export type Session = {
  id: string;
  connection: Connection | null;
  /** Replies to finished mutations, so a mutation resent after a reconnect is answered, not run twice. */
  mutationReplies: Map<number, object>;
  /** Mutations queued or running; a resend of one of these is ignored, the original answers. */
  mutationsInFlight: Set<number>;
  /** When the session last lost its connection; sessions gone long enough are forgotten. */
  disconnectedAt?: number;
};

const pingEveryMs = 15_000;

export class Connection {
  session: Session | null = null;
  querySetVersion = 0;
  identityVersion = 0;
  readonly queries = new Map<QueryId, Subscription>();
  /** Set after a mutation reply: the client resolves it only on a Transition reaching its ts. */
  needsTransition = false;
  /** The newest commit reflected in a Transition sent here: what this client could have seen. */
  seenSeq = 0;
  private sentVersion: StateVersion = { querySet: 0, identity: 0, ts: 0n };
  private lastSendAt = Date.now();
  private readonly pinger: NodeJS.Timeout;

  constructor(readonly socket: WebSocket) {
    // The client reconnects after 60 s without any message; keep quiet connections alive.
    this.pinger = setInterval(() => {
      if (Date.now() - this.lastSendAt >= pingEveryMs) this.send({ type: "Ping" });
    }, pingEveryMs);
    this.pinger.unref();
  }

  get open(): boolean {
    return this.socket.readyState === this.socket.OPEN;
  }

  send(message: object): void {
    if (!this.open) return;
    this.lastSendAt = Date.now();
    this.socket.send(JSON.stringify(message));
  }

  /** `seenSeq`: the newest commit the state at `ts` reflects. */
  sendTransition(modifications: StateModification[], ts: bigint, seenSeq: number): void {
    const end: StateVersion = { querySet: this.querySetVersion, identity: this.identityVersion, ts };
    this.send(transitionMessage(this.sentVersion, end, modifications));
    this.sentVersion = end;
    this.needsTransition = false;
    if (this.open) this.seenSeq = Math.max(this.seenSeq, seenSeq);
  }

  fatal(error: string): void {
    this.send({ type: "FatalError", error });
    this.socket.close(1011, error.slice(0, 120));
  }

  dispose(): void {
    clearInterval(this.pinger);
  }
}
