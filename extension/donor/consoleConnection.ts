import * as vscode from "vscode";
import { KeyedConnection } from "./keyedConnection";
import type { Membership } from "./membership";
import type { OperatorKeyStore } from "./operatorKey";

/** The key the console uses: this machine's operator key, else its worker key (which may manage the farm or not). */
export type ConsoleCredential = { url: string; apiKey: string; kind: "operator" | "worker" };

function consoleCredential(membership: Membership, operatorKeys: OperatorKeyStore): ConsoleCredential | undefined {
  const operator = operatorKeys.current;
  if (operator) return { url: operator.url, apiKey: operator.key, kind: "operator" };
  const apiKey = membership.apiKey;
  if (membership.joined && apiKey) return { url: membership.url, apiKey, kind: "worker" };
  return undefined;
}

/**
 * The console's own connection to the farm, with the console's credential: the operator key when this machine has
 * one (it is read here and nowhere else: the engine never sees it), else the worker key the machine joined with
 * (a canManage grant from before operator keys). A client exists only while the console uses it (see
 * KeyedConnection); when the credential changes (Leave Farm, Join, an operator key set or forgotten) `onDidChange`
 * fires and the console subscribes again with the new one.
 */
export class ConsoleConnection extends KeyedConnection {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly listeners: vscode.Disposable[];
  private last: string | undefined;

  constructor(
    private readonly membership: Membership,
    private readonly operatorKeys: OperatorKeyStore,
  ) {
    super(() => consoleCredential(membership, operatorKeys), "no key to open the console with: join a farm or enter an operator key");
    this.last = this.fingerprint();
    const follow = () => {
      const now = this.fingerprint();
      if (now === this.last) return;
      this.last = now;
      this.changed.fire();
    };
    this.listeners = [membership.onDidChange(follow), operatorKeys.onDidChange(follow)];
  }

  credential(): ConsoleCredential | undefined {
    return consoleCredential(this.membership, this.operatorKeys);
  }

  override dispose(): void {
    for (const listener of this.listeners) listener.dispose();
    this.changed.dispose();
    super.dispose();
  }

  private fingerprint(): string | undefined {
    const c = this.credential();
    return c && JSON.stringify([c.url, c.apiKey]);
  }
}
