# A stand-in desktop for the idle tests: exports the D-Bus services Farmhand's idle sources read, answering from a
# JSON state file the test rewrites ({"lastInputAt": epoch ms, "locked": bool, "idleHint": bool, "idleSince": epoch ms,
# "metered": NMMetered 0-4}), and NetworkManager's Metered property for the metered-connection tests.
# Usage: python3 idleStandIn.py <bus address> <state file> <comma-separated services: mutter,freedesktop,logind,networkmanager>
import json, sys, time
from gi.repository import Gio, GLib

address, state_path, wanted = sys.argv[1], sys.argv[2], sys.argv[3].split(",")

SERVICES = {
    "mutter": [
        ("org.gnome.Mutter.IdleMonitor", "/org/gnome/Mutter/IdleMonitor/Core",
         "<node><interface name='org.gnome.Mutter.IdleMonitor'><method name='GetIdletime'><arg type='t' direction='out'/></method></interface></node>"),
        ("org.gnome.ScreenSaver", "/org/gnome/ScreenSaver",
         "<node><interface name='org.gnome.ScreenSaver'><method name='GetActive'><arg type='b' direction='out'/></method></interface></node>"),
    ],
    "freedesktop": [
        ("org.freedesktop.ScreenSaver", "/org/freedesktop/ScreenSaver",
         "<node><interface name='org.freedesktop.ScreenSaver'><method name='GetSessionIdleTime'><arg type='u' direction='out'/></method>"
         "<method name='GetActive'><arg type='b' direction='out'/></method></interface></node>"),
    ],
    "logind": [
        ("org.freedesktop.login1", "/org/freedesktop/login1/session/auto",
         "<node><interface name='org.freedesktop.DBus.Properties'><method name='GetAll'><arg type='s' direction='in'/>"
         "<arg type='a{sv}' direction='out'/></method></interface></node>"),
    ],
    "networkmanager": [
        ("org.freedesktop.NetworkManager", "/org/freedesktop/NetworkManager",
         "<node><interface name='org.freedesktop.DBus.Properties'><method name='Get'><arg type='s' direction='in'/>"
         "<arg type='s' direction='in'/><arg type='v' direction='out'/></method></interface></node>"),
    ],
}

def state():
    with open(state_path) as f:
        return json.load(f)

def idle_ms(s):
    return max(0, int(time.time() * 1000) - int(s["lastInputAt"]))

def on_call(connection, sender, path, interface, method, params, invocation):
    s = state()
    if method == "GetIdletime":
        invocation.return_value(GLib.Variant("(t)", (idle_ms(s),)))
    elif method == "GetSessionIdleTime":
        invocation.return_value(GLib.Variant("(u)", (idle_ms(s),)))
    elif method == "GetActive":
        invocation.return_value(GLib.Variant("(b)", (bool(s.get("locked", False)),)))
    elif method == "Get":
        interface_name, prop = params.unpack()
        if interface_name == "org.freedesktop.NetworkManager" and prop == "Metered":
            invocation.return_value(GLib.Variant("(v)", (GLib.Variant("u", int(s.get("metered", 0))),)))
        else:
            invocation.return_dbus_error("org.freedesktop.DBus.Error.UnknownProperty", "no such property")
    elif method == "GetAll":
        props = {
            "IdleHint": GLib.Variant("b", bool(s.get("idleHint", False))),
            "IdleSinceHint": GLib.Variant("t", int(s.get("idleSince", 0)) * 1000),
            "LockedHint": GLib.Variant("b", bool(s.get("locked", False))),
            "Name": GLib.Variant("s", "farmhand-test"),
        }
        invocation.return_value(GLib.Variant("(a{sv})", (props,)))

flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
connection = Gio.DBusConnection.new_for_address_sync(address, flags, None, None)
for service in wanted:
    for name, path, xml in SERVICES[service]:
        info = Gio.DBusNodeInfo.new_for_xml(xml)
        for interface in info.interfaces:
            connection.register_object(path, interface, on_call, None, None)
        connection.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
                             GLib.Variant("(su)", (name, 4)), None, Gio.DBusCallFlags.NONE, -1, None)
print("ready", flush=True)
GLib.MainLoop().run()
