import * as vscode from "vscode";

/** `setContext` crosses to the window: send a key only when its value changes. */
export class ContextKeys {
  private readonly values = new Map<string, unknown>();

  set(keys: Record<string, unknown>): void {
    for (const [key, value] of Object.entries(keys)) {
      if (this.values.get(key) === value) continue;
      this.values.set(key, value);
      void vscode.commands.executeCommand("setContext", key, value);
    }
  }
}
