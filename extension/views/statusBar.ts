import * as vscode from "vscode";
import type { DonationState } from "../policy/donationSwitch";
import { Disposable } from "./disposable";

/** The one status-bar item: shows whether this machine donates, and toggles it on click. */
export class StatusBar extends Disposable {
  private readonly item = this._register(
    vscode.window.createStatusBarItem("farmhand.status", vscode.StatusBarAlignment.Left, 10),
  );

  constructor() {
    super();
    this.item.name = "Farmhand";
    this.item.command = "farmhand.toggle";
    this.item.show();
  }

  render(state: DonationState): void {
    switch (state.kind) {
      case "off":
        this.item.text = "$(circle-slash) Farmhand: off";
        this.item.tooltip = "Farmhand is not donating this machine. Click to start.";
        this.item.backgroundColor = undefined;
        break;
      case "on":
        this.item.text = "$(pulse) Farmhand: on";
        this.item.tooltip = "Farmhand is donating this machine. Click to stop.";
        this.item.backgroundColor = undefined;
        break;
      case "paused":
        this.item.text = "$(debug-pause) Farmhand: paused";
        this.item.tooltip = `Farmhand is paused: ${state.reason}. Click to stop.`;
        this.item.backgroundColor = new vscode.ThemeColor("statusBarItem.warningBackground");
        break;
    }
    this.item.accessibilityInformation = { label: `Farmhand ${state.kind}`, role: "button" };
  }
}
