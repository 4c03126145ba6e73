import { VSCODE_ONLY_TEXT } from "./idle/machineIdle";

/** What the policy senses on this machine, for the panel and the tooltip: one line. */
export type Sensing = {
  /** The machine-wide idle source in use; null: none answers (VS Code activity only); undefined: not tried yet. */
  idleSource: string | null | undefined;
};

export function sensingText(s: Sensing): string | undefined {
  const parts: string[] = [];
  if (s.idleSource === null) parts.push(VSCODE_ONLY_TEXT);
  else if (s.idleSource !== undefined) parts.push(`idle read from ${s.idleSource}`);
  return parts.length ? parts.join(" · ") : undefined;
}
