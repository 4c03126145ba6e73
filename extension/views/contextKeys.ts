import * as vscode from "vscode";

/** `setContext` crosses to the window: send a key only when its value changes. */
export class ContextKeys {
  private readonly sent = new Map<string, unknown>();

  /** The values last sent. */
  values(): Record<string, unknown> {
    return Object.fromEntries(this.sent);
  }

  set(keys: Record<string, unknown>): void {
    for (const [key, value] of Object.entries(keys)) {
      if (this.sent.get(key) === value) continue;
      this.sent.set(key, value);
      void vscode.commands.executeCommand("setContext", key, value);
    }
  }
}
