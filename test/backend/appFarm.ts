import { internal } from "../../convex/_generated/api";
import { newBackend, newFarm, type Backend, type Farm } from "./setup";

export type PublishingFarm = Farm & { publishKey: string };

/** A farm with a publishing key next to its ordinary client key. */
export async function publishingFarm(t: Backend = newBackend(), name = "acme"): Promise<PublishingFarm> {
  const farm = await newFarm(t, name);
  const { key } = await t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "publisher", canPublish: true });
  return { ...farm, publishKey: key };
}

/** POST /api/apps/<name> with the farm's publishing key (or another key, or none). */
export function publish(
  farm: Farm,
  name: string,
  body: Uint8Array | string,
  options: { key?: string | null; query?: string; contentType?: string } = {},
) {
  const headers: Record<string, string> = { "content-type": options.contentType ?? "application/wasm" };
  const key = options.key === undefined ? (farm as PublishingFarm).publishKey : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  return farm.t.fetch(`/api/apps/${name}${options.query ? `?${options.query}` : ""}`, { method: "POST", headers, body: body as RequestInit["body"] });
}

/** DELETE /api/apps/<name>/<version>. */
export function remove(farm: Farm, name: string, version: number | string, key: string) {
  return farm.t.fetch(`/api/apps/${name}/${version}`, { method: "DELETE", headers: { authorization: `Bearer ${key}` } });
}
