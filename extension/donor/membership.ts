import * as vscode from "vscode";

const KEY_SECRET = "farmhand.workerKey";

/** Which farm this machine belongs to: the URL lives in settings, the worker key only in SecretStorage. */
export class Membership {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private key: string | undefined;

  private readonly listeners: vscode.Disposable[];

  constructor(private readonly secrets: vscode.SecretStorage) {
    // Another window may join, switch farms or leave: follow it.
    this.listeners = [
      secrets.onDidChange((e) => e.key === KEY_SECRET && void this.load()),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration("farmhand.deploymentUrl") && this.changed.fire()),
    ];
  }

  /** Read the key; a key that differs from the one held (none, before the first load) is a change. */
  async load(): Promise<void> {
    const key = await this.secrets.get(KEY_SECRET);
    if (key === this.key) return;
    this.key = key;
    this.changed.fire();
  }

  get url(): string {
    return vscode.workspace.getConfiguration("farmhand").get<string>("deploymentUrl", "");
  }

  get joined(): boolean {
    return Boolean(this.key && this.url);
  }

  async join(url: string, workerKey: string): Promise<void> {
    await vscode.workspace.getConfiguration("farmhand").update("deploymentUrl", url, vscode.ConfigurationTarget.Global);
    await this.secrets.store(KEY_SECRET, workerKey);
    this.key = workerKey;
    this.changed.fire();
  }

  get apiKey(): string | undefined {
    return this.key;
  }

  /** Forget the farm: the key leaves SecretStorage, the URL leaves settings. */
  async leave(): Promise<void> {
    await this.secrets.delete(KEY_SECRET);
    await vscode.workspace.getConfiguration("farmhand").update("deploymentUrl", undefined, vscode.ConfigurationTarget.Global);
    this.key = undefined;
    this.changed.fire();
  }

  dispose(): void {
    for (const listener of this.listeners) listener.dispose();
    this.changed.dispose();
  }
}
