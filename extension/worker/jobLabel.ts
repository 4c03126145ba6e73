/** An app job's pinned app as views show it. */
export type AppLabel = { name: string; version: number };

/** How a job is named in logs and views: its type, and for an app job the version it runs (`app.render v3`). */
export function jobLabel(type: string, app?: AppLabel): string {
  return app ? `app.${app.name} v${app.version}` : type;
}
