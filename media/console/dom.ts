// The console's building blocks: @vscode-elements/elements (they follow the editor's theme), imported one
// component at a time so the bundle carries only these. Data only ever goes into the page as text, never as markup.
import { humanDuration } from "../../extension/donorState/format";
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
import type { ConsoleRequest } from "../../extension/protocol/consoleProtocol";

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

/** The tables on screen by id: the next render patches them in place (see beginRender) instead of making new ones. */
let onScreen = new Map<string, VscodeTable>();

/** Call before a render of `root`: its tables with an id are patched by `table` rather than re-created. */
export function beginRender(root: HTMLElement): void {
  onScreen = new Map(Array.from(root.querySelectorAll<VscodeTable>("vscode-table[id]")).map((t) => [t.id, t]));
}

/**
 * A table of text (or nodes) cells; `columns` are the initial widths (vscode-table shares the width evenly
 * otherwise). Each text cell's full text is its tooltip, since long cells are cut with an ellipsis. A table of the
 * same id and headers already on screen is patched in place, row by row and cell by cell: a control the user is
 * using (a button with focus, an open list) stays the same element unless what it shows or acts on changed. Nodes
 * in cells say what they act on in their attributes (a data-for id), so equal markup means the same control.
 */
export function table(headers: string[], rows: Array<Array<string | Node>>, attrs: Record<string, string> = {}, columns?: string[]): VscodeTable {
  const old = attrs.id ? onScreen.get(attrs.id) : undefined;
  if (old && headersOf(old) === JSON.stringify(headers)) {
    patchRows(old, rows);
    return old;
  }
  const t = el("vscode-table", undefined, { "bordered-rows": "", zebra: "", ...attrs });
  if (columns) t.columns = columns;
  const head = el("vscode-table-header", undefined, { slot: "header" });
  for (const h of headers) head.append(el("vscode-table-header-cell", h));
  const body = el("vscode-table-body", undefined, { slot: "body" });
  for (const cells of rows) body.append(tableRow(cells));
  t.append(head, body);
  return t;
}

function headersOf(t: VscodeTable): string {
  return JSON.stringify(Array.from(t.querySelectorAll("vscode-table-header-cell")).map((c) => c.textContent ?? ""));
}

function tableRow(cells: Array<string | Node>): HTMLElement {
  const row = el("vscode-table-row");
  for (const cell of cells) {
    const td = el("vscode-table-cell");
    setCell(td, cell);
    row.append(td);
  }
  return row;
}

function setCell(td: HTMLElement, cell: string | Node): void {
  td.replaceChildren(cell);
  td.title = typeof cell === "string" ? cell : "";
}

const markup = (node: Node) => (node instanceof Element ? node.outerHTML : (node.textContent ?? ""));

function patchRows(t: VscodeTable, rows: Array<Array<string | Node>>): void {
  const body = t.querySelector("vscode-table-body");
  if (!body) return;
  const existing = Array.from(body.children) as HTMLElement[];
  const firstBefore = existing[0];
  rows.forEach((cells, i) => {
    const row = existing[i];
    if (!row || row.children.length !== cells.length) {
      const made = tableRow(cells);
      if (row) row.replaceWith(made);
      else body.append(made);
      return;
    }
    cells.forEach((cell, j) => {
      const td = row.children[j] as HTMLElement;
      if (typeof cell === "string") {
        if (td.childElementCount > 0 || td.textContent !== cell) setCell(td, cell);
      } else if (td.childNodes.length !== 1 || !td.firstChild || markup(td.firstChild) !== markup(cell)) {
        setCell(td, cell);
      }
    });
  });
  for (const extra of existing.slice(rows.length)) extra.remove();
  // vscode-table sizes the columns by the cells of its first row: a new first row is sized again
  if (body.firstElementChild && body.firstElementChild !== firstBefore) t.columns = [...t.columns];
}

/**
 * Put `children` into `root` in this order, keeping in place every child that is already there: a kept element is
 * never detached (an open dropdown or a focused field in it stays as it is), only what is new goes in and what is
 * gone comes out.
 */
export function reconcile(root: HTMLElement, children: Node[]): void {
  const wanted = new Set(children);
  for (const child of Array.from(root.childNodes)) if (!wanted.has(child)) child.remove();
  children.forEach((child, i) => {
    if (root.childNodes[i] !== child) root.insertBefore(child, root.childNodes[i] ?? null);
  });
}

/** A wrapper that lets a wide table scroll sideways in a narrow editor instead of cutting its last columns off. */
export function scrolling(t: VscodeTable, className: string): HTMLElement {
  const parent = t.parentElement;
  if (parent?.classList.contains("table-scroll")) return parent;
  const box = el("div", undefined, { class: `table-scroll ${className}` });
  box.append(t);
  return box;
}

export const when = (ms: number | undefined) => (ms === undefined ? "—" : new Date(ms).toLocaleString());
/** A duration in human units ("850 ms", "20 min"), its exact milliseconds on hover; "—" for none. */
export function durationText(ms: number | null | undefined): HTMLElement {
  const attrs: Record<string, string> = { class: "duration" };
  if (ms !== null && ms !== undefined && Number.isFinite(ms)) attrs.title = `${Math.round(ms).toLocaleString()} ms`;
  return el("span", humanDuration(ms), attrs);
}
export const hours = (ms: number) => `${(ms / 3_600_000).toFixed(2)} h`;
