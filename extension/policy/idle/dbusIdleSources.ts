import { DBusConnection, sessionBusAddress, systemBusAddress } from "./dbusConnection";
import { IdleSourceError, type IdleReading, type IdleSource } from "./idleSource";

/**
 * Linux desktops over D-Bus, on one connection each, opened on the first read. Each read is one or two messages
 * on that socket (microseconds of CPU), so these sources can be read twice a second while jobs run.
 */
const DBUS_FAST_POLL_MS = 500;

type Open = () => Promise<DBusConnection>;

abstract class DBusIdleSource implements IdleSource {
  abstract readonly name: string;
  readonly fastPollMs = DBUS_FAST_POLL_MS;
  private connection: Promise<DBusConnection> | undefined;

  constructor(private readonly open: Open) {}

  async read(): Promise<IdleReading> {
    this.connection ??= this.open();
    const connection = await this.connection;
    if (connection.closed) throw new IdleSourceError(`${this.name}: the bus connection closed`);
    return this.readOn(connection);
  }

  dispose(): void {
    void this.connection?.then((c) => c.close()).catch(() => undefined);
    this.connection = undefined;
  }

  protected abstract readOn(connection: DBusConnection): Promise<IdleReading>;
}

/** A desktop service that answers its idle time in milliseconds, and the screen saver whose GetActive is the lock. */
type IdleTimeService = { name: string; destination: string; path: string; interface: string; member: string; screenSaver: { destination: string; path: string } };

class IdleTimeSource extends DBusIdleSource {
  readonly name: string;

  constructor(
    open: Open,
    private readonly service: IdleTimeService,
  ) {
    super(open);
    this.name = service.name;
  }

  protected async readOn(connection: DBusConnection): Promise<IdleReading> {
    const { destination, path, member } = this.service;
    const [idle] = await connection.call({ destination, path, interface: this.service.interface, member });
    const saver = this.service.screenSaver;
    return { idleMs: milliseconds(idle, this.name), locked: await optionalFlag(connection, saver.destination, saver.path, saver.destination) };
  }
}

/** GNOME (X11 and Wayland): Mutter's idle monitor, in milliseconds; the lock from GNOME Shell's screen shield. */
export function mutterIdleSource(open: Open): IdleSource {
  return new IdleTimeSource(open, {
    name: "GNOME Mutter IdleMonitor (D-Bus)",
    destination: "org.gnome.Mutter.IdleMonitor",
    path: "/org/gnome/Mutter/IdleMonitor/Core",
    interface: "org.gnome.Mutter.IdleMonitor",
    member: "GetIdletime",
    screenSaver: { destination: "org.gnome.ScreenSaver", path: "/org/gnome/ScreenSaver" },
  });
}

/**
 * KDE and others: org.freedesktop.ScreenSaver. KDE answers GetSessionIdleTime in milliseconds (KIdleTime);
 * the lock is its GetActive.
 */
export function freedesktopScreenSaverSource(open: Open): IdleSource {
  return new IdleTimeSource(open, {
    name: "org.freedesktop.ScreenSaver (D-Bus)",
    destination: "org.freedesktop.ScreenSaver",
    path: "/org/freedesktop/ScreenSaver",
    interface: "org.freedesktop.ScreenSaver",
    member: "GetSessionIdleTime",
    screenSaver: { destination: "org.freedesktop.ScreenSaver", path: "/org/freedesktop/ScreenSaver" },
  });
}

/**
 * The last resort: systemd-logind's hints for this session, on the system bus. IdleHint is set by the desktop after
 * its own idle delay, so it answers late but never wrongly; a session whose desktop never set a hint gives no answer.
 */
export class LogindIdleSource extends DBusIdleSource {
  readonly name = "systemd-logind IdleHint (D-Bus)";

  constructor(
    open: Open,
    private readonly now: () => number = Date.now,
    private readonly sessionPath = "/org/freedesktop/login1/session/auto",
  ) {
    super(open);
  }

  protected async readOn(connection: DBusConnection): Promise<IdleReading> {
    const [properties] = await connection.call({
      destination: "org.freedesktop.login1",
      path: this.sessionPath,
      interface: "org.freedesktop.DBus.Properties",
      member: "GetAll",
      signature: "s",
      args: ["org.freedesktop.login1.Session"],
    });
    return parseLogindSession(properties, this.now());
  }
}

/** logind's session properties (a{sv}) → a reading; throws when the hints were never set. */
export function parseLogindSession(properties: unknown, now: number): IdleReading {
  if (typeof properties !== "object" || properties === null) throw new IdleSourceError("logind: no session properties");
  const p = properties as Record<string, unknown>;
  const { IdleHint: idle, IdleSinceHint: sinceUs, LockedHint: locked } = p;
  if (typeof idle !== "boolean" || typeof sinceUs !== "number") throw new IdleSourceError("logind: the session has no IdleHint/IdleSinceHint");
  if (!idle && sinceUs === 0) throw new IdleSourceError("logind: no desktop sets this session's idle hint");
  return { idleMs: idle ? Math.max(0, now - Math.floor(sinceUs / 1000)) : 0, locked: typeof locked === "boolean" ? locked : undefined };
}

export function openSessionBus(env: NodeJS.ProcessEnv = process.env): Open {
  return () => DBusConnection.open(sessionBusAddress(env));
}

export function openSystemBus(env: NodeJS.ProcessEnv = process.env): Open {
  return () => DBusConnection.open(systemBusAddress(env));
}

function milliseconds(value: unknown, source: string): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw new IdleSourceError(`${source}: answered ${JSON.stringify(value)}, not a time`);
  return value;
}

/** A screen saver's GetActive; a desktop without that service leaves the lock unknown rather than failing the read. */
async function optionalFlag(connection: DBusConnection, destination: string, path: string, iface: string): Promise<boolean | undefined> {
  try {
    const [active] = await connection.call({ destination, path, interface: iface, member: "GetActive" });
    return typeof active === "boolean" ? active : undefined;
  } catch {
    return undefined;
  }
}
