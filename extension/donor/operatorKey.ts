import * as vscode from "vscode";

const OPERATOR_SECRET = "farmhand.operatorKey";

/** An operator key and the farm it belongs to. */
export type StoredOperatorKey = { url: string; key: string };

/**
 * This machine's operator key (fh_o_…), for the console only: kept in SecretStorage under a key of its own, apart
 * from the worker key (Membership). The engine and its jobs never see it: only the console's connection reads it.
 */
export class OperatorKeyStore implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private stored: StoredOperatorKey | undefined;
  private readonly listener: vscode.Disposable;

  constructor(private readonly secrets: vscode.SecretStorage) {
    // Another window may set or forget it: follow it.
    this.listener = secrets.onDidChange((e) => e.key === OPERATOR_SECRET && void this.load());
  }

  /** Read the key; a key that differs from the one held (none, before the first load) is a change. */
  async load(): Promise<void> {
    const stored = parseStored(await this.secrets.get(OPERATOR_SECRET));
    if (JSON.stringify(stored) === JSON.stringify(this.stored)) return;
    this.stored = stored;
    this.changed.fire();
  }

  get current(): StoredOperatorKey | undefined {
    return this.stored;
  }

  async store(value: StoredOperatorKey): Promise<void> {
    await this.secrets.store(OPERATOR_SECRET, JSON.stringify(value));
    this.stored = value;
    this.changed.fire();
  }

  async forget(): Promise<void> {
    await this.secrets.delete(OPERATOR_SECRET);
    this.stored = undefined;
    this.changed.fire();
  }

  /**
   * The first load, with provisioning (fleets, demos): FARMHAND_OPERATOR_KEY (with FARMHAND_OPERATOR_URL, else
   * FARMHAND_JOIN_URL) is stored once if no key is, and taken out of this process's environment at once (before the
   * read), so no job started from here inherits it.
   */
  async loadAndProvision(env: NodeJS.ProcessEnv = process.env): Promise<void> {
    const key = env.FARMHAND_OPERATOR_KEY?.trim();
    const url = (env.FARMHAND_OPERATOR_URL ?? env.FARMHAND_JOIN_URL)?.trim();
    delete env.FARMHAND_OPERATOR_KEY;
    await this.load();
    if (!key || !url || this.stored) return;
    await this.store({ url, key });
  }

  dispose(): void {
    this.listener.dispose();
    this.changed.dispose();
  }
}

function parseStored(text: string | undefined): StoredOperatorKey | undefined {
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as Partial<StoredOperatorKey>;
    return typeof value.url === "string" && typeof value.key === "string" ? { url: value.url, key: value.key } : undefined;
  } catch {
    return undefined;
  }
}
