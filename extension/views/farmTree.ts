import * as vscode from "vscode";
import { Disposable } from "./disposable";

/**
 * The "Farm" tree. Until this machine has joined a farm it is empty, so VS Code shows the welcome view
 * (contributed in package.json) with the Join button.
 */
export class FarmTree extends Disposable implements vscode.TreeDataProvider<vscode.TreeItem> {
  static readonly viewId = "farmhand.farm";
  private readonly changed = this._register(new vscode.EventEmitter<vscode.TreeItem | undefined>());
  readonly onDidChangeTreeData = this.changed.event;

  constructor(private readonly isJoined: () => boolean, private readonly farmUrl: () => string) {
    super();
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  getTreeItem(item: vscode.TreeItem): vscode.TreeItem {
    return item;
  }

  getChildren(parent?: vscode.TreeItem): vscode.TreeItem[] {
    if (parent || !this.isJoined()) return [];
    const farm = new vscode.TreeItem("Joined farm", vscode.TreeItemCollapsibleState.None);
    farm.description = this.farmUrl();
    farm.iconPath = new vscode.ThemeIcon("server-environment");
    return [farm];
  }
}
