import { KeyedConnection } from "./keyedConnection";
import type { Membership } from "./membership";

/**
 * One Convex client per window for the farm this machine joined, with its worker key, shared by the engine and the
 * views. It exists only while someone uses it (donating, or a visible Farmhand view); see KeyedConnection.
 */
export class FarmConnection extends KeyedConnection {
  constructor(membership: Membership) {
    super(() => (membership.joined && membership.apiKey ? { url: membership.url, apiKey: membership.apiKey } : undefined), "this machine has not joined a farm");
  }
}
