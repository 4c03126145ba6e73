import { DBusConnection, systemBusAddress } from "./idle/dbusConnection";

/**
 * Is this machine's connection metered (a phone's hotspot, a capped plan)? Linux: NetworkManager's `Metered`
 * property, over the same D-Bus client the idle sources use (one long-lived connection to the system bus, one
 * message per read). Windows: the connection cost from the one long-lived PowerShell (windowsWatch.ts). macOS: not
 * sensed — it offers no cheap answer without private frameworks. Undefined: not known (NetworkManager absent).
 */
export type MeteredSensor = { read(): Promise<boolean | undefined>; dispose(): void };

/**
 * NMMetered: 0 unknown, 1 yes, 2 no, 3 guessed yes (e.g. a phone's hotspot), 4 guessed no. NetworkManager guesses
 * from the connection it uses for the default route; a guess counts.
 */
export function parseNmMetered(value: unknown): boolean | undefined {
  if (value === 1 || value === 3) return true;
  if (value === 2 || value === 4) return false;
  return undefined;
}

export class NetworkManagerMetered implements MeteredSensor {
  private connection: Promise<DBusConnection> | undefined;

  constructor(private readonly open: () => Promise<DBusConnection> = () => DBusConnection.open(systemBusAddress())) {}

  async read(): Promise<boolean | undefined> {
    let connection: DBusConnection;
    try {
      this.connection ??= this.open();
      connection = await this.connection;
    } catch {
      this.connection = undefined; // no system bus: the next read tries again
      return undefined;
    }
    if (connection.closed) {
      this.connection = undefined; // the bus went away: the next read opens another connection
      return undefined;
    }
    try {
      const [value] = await connection.call({
        destination: "org.freedesktop.NetworkManager",
        path: "/org/freedesktop/NetworkManager",
        interface: "org.freedesktop.DBus.Properties",
        member: "Get",
        signature: "ss",
        args: ["org.freedesktop.NetworkManager", "Metered"],
      });
      return parseNmMetered(value);
    } catch {
      return undefined; // no NetworkManager on the bus (now): not known
    }
  }

  dispose(): void {
    void this.connection?.then((c) => c.close()).catch(() => undefined);
    this.connection = undefined;
  }
}
