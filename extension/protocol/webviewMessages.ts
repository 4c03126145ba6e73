/**
 * What the webviews' protocols share: a message as a valibot schema (its `type` and its fields, nothing more), the
 * message types those schemas let through, and the check the extension runs on every message a webview sends, which
 * refuses with a reason naming the message and the field. No 'vscode' import (the webviews bundle the protocols).
 */
import * as v from "valibot";

/** One message: `type` and these fields, no other. */
export const message = /* @__NO_SIDE_EFFECTS__ */ <T extends string, E extends v.ObjectEntries>(type: T, entries: E) => v.strictObject({ type: v.literal(type), ...entries });

/** The messages these schemas let through, one type per message. */
export type MessageOf<S extends Record<string, v.GenericSchema>> = { [K in keyof S]: v.InferOutput<S[K]> }[keyof S];

export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A message that arrived from a webview, checked against its type's schema, or why not: `"retryJob" needs a job id`
 * (a field's own reason, also when the field is left out), `unexpected field(s) x in "ready"`, `unknown message type`.
 */
export function parseMessage<S extends Record<string, v.StrictObjectSchema<v.ObjectEntries, undefined>>>(
  schemas: S,
  raw: unknown,
): { ok: true; request: MessageOf<S> } | { ok: false; reason: string } {
  if (!isRecord(raw)) return { ok: false, reason: "message is not an object" };
  const type = raw.type;
  if (typeof type !== "string" || !Object.hasOwn(schemas, type)) return { ok: false, reason: `unknown message type ${JSON.stringify(type)?.slice(0, 80)}` };
  const schema: v.StrictObjectSchema<v.ObjectEntries, undefined> = schemas[type];
  const parsed = v.safeParse(schema, raw, { abortEarly: true });
  if (parsed.success) return { ok: true, request: parsed.output };
  const [issue] = parsed.issues;
  const field = issue.path?.length === 1 && issue.path[0].origin === "key" ? String(issue.path[0].key) : undefined;
  if (field !== undefined && !Object.hasOwn(schema.entries, field)) {
    const extra = Object.keys(raw).filter((k) => !Object.hasOwn(schema.entries, k));
    return { ok: false, reason: `unexpected field(s) ${extra.slice(0, 5).join(", ")} in "${type}"` };
  }
  // a field left out: the reason its schema gives for a value that is not there
  const why = field === undefined ? issue.message : (v.safeParse(schema.entries[field], undefined).issues?.[0].message ?? `needs ${field}`);
  return { ok: false, reason: `"${type}" ${why}` };
}
