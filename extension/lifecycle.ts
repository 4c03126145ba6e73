import type * as vscode from "vscode";

/**
 * Base for anything that owns disposables: register them once, dispose them all together (last registered first).
 * Registering after the owner was disposed disposes at once, so nothing outlives its owner.
 */
export abstract class DisposableOwner implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private disposed = false;

  protected _register<T extends vscode.Disposable>(disposable: T): T {
    if (this.disposed) disposable.dispose();
    else this.disposables.push(disposable);
    return disposable;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const d of this.disposables.splice(0).reverse()) d.dispose();
  }
}
