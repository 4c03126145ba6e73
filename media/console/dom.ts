// The console's building blocks: @vscode-elements/elements (they follow the editor's theme), imported one
// component at a time so the bundle carries only these. Data only ever goes into the page as text, never as markup.
import "@vscode-elements/elements/dist/vscode-badge/index.js";
import "@vscode-elements/elements/dist/vscode-button/index.js";
import "@vscode-elements/elements/dist/vscode-checkbox/index.js";
import "@vscode-elements/elements/dist/vscode-option/index.js";
import "@vscode-elements/elements/dist/vscode-single-select/index.js";
import "@vscode-elements/elements/dist/vscode-tab-header/index.js";
import "@vscode-elements/elements/dist/vscode-tab-panel/index.js";
import "@vscode-elements/elements/dist/vscode-table/index.js";
import "@vscode-elements/elements/dist/vscode-table-body/index.js";
import "@vscode-elements/elements/dist/vscode-table-cell/index.js";
import "@vscode-elements/elements/dist/vscode-table-header/index.js";
import "@vscode-elements/elements/dist/vscode-table-header-cell/index.js";
import "@vscode-elements/elements/dist/vscode-table-row/index.js";
import "@vscode-elements/elements/dist/vscode-tabs/index.js";
import "@vscode-elements/elements/dist/vscode-textfield/index.js";
import type { VscodeButton } from "@vscode-elements/elements/dist/vscode-button/vscode-button.js";
import type { VscodeTable } from "@vscode-elements/elements/dist/vscode-table/vscode-table.js";
import type { ConsoleRequest } from "../../extension/hostAndWebview/consoleProtocol";

declare function acquireVsCodeApi(): { postMessage(message: ConsoleRequest): void };

const vscode = acquireVsCodeApi();

/** Sends a request to the extension (which validates it before acting). */
export const post = (request: ConsoleRequest): void => vscode.postMessage(request);

/** An element with text and attributes. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, attrs: Record<string, string> = {}): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  return node;
}

export function button(label: string, onClick: () => void, attrs: Record<string, string> = {}): VscodeButton {
  const b = el("vscode-button", label, attrs);
  b.addEventListener("click", onClick);
  return b;
}

/** A link-like button for a table cell (opens something). */
export function linkButton(label: string, onClick: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = el("button", label, { type: "button", class: "link", ...attrs });
  b.addEventListener("click", onClick);
  return b;
}

/**
 * A table of text (or nodes) cells; `columns` are the initial widths (vscode-table shares the width evenly
 * otherwise). Each text cell's full text is its tooltip, since long cells are cut with an ellipsis.
 */
export function table(headers: string[], rows: Array<Array<string | Node>>, attrs: Record<string, string> = {}, columns?: string[]): VscodeTable {
  const t = el("vscode-table", undefined, { "bordered-rows": "", zebra: "", ...attrs });
  if (columns) t.columns = columns;
  const head = el("vscode-table-header", undefined, { slot: "header" });
  for (const h of headers) head.append(el("vscode-table-header-cell", h));
  const body = el("vscode-table-body", undefined, { slot: "body" });
  for (const cells of rows) {
    const row = el("vscode-table-row");
    for (const cell of cells) {
      const td = el("vscode-table-cell");
      td.append(cell);
      if (typeof cell === "string" && cell.length > 0) td.title = cell;
      row.append(td);
    }
    body.append(row);
  }
  t.append(head, body);
  return t;
}

export const when = (ms: number | undefined) => (ms === undefined ? "—" : new Date(ms).toLocaleString());
export const seconds = (ms: number | null | undefined) => (ms === null || ms === undefined ? "—" : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
export const hours = (ms: number) => `${(ms / 3_600_000).toFixed(2)} h`;
