#!/usr/bin/env python3
"""A media player on the D-Bus session bus, as MPRIS 2 describes one, for the end-to-end tests.

Owns org.mpris.MediaPlayer2.fixture on the bus in DBUS_SESSION_BUS_ADDRESS and answers property reads for
org.mpris.MediaPlayer2.Player. Prints "ready" once the name is owned. Commands on stdin, one a line, each
answered with "ok":
  track TITLE|ARTIST|ALBUM|LENGTH_SECONDS
  play | pause
  seek SECONDS
"""
import sys
import time

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

XML = """
<node>
  <interface name="org.mpris.MediaPlayer2">
    <property name="Identity" type="s" access="read"/>
  </interface>
  <interface name="org.mpris.MediaPlayer2.Player">
    <property name="PlaybackStatus" type="s" access="read"/>
    <property name="Metadata" type="a{sv}" access="read"/>
    <property name="Position" type="x" access="read"/>
  </interface>
</node>
"""

state = {"title": "", "artist": "", "album": "", "length": 0.0, "playing": False,
         "position": 0.0, "since": time.monotonic()}


def position():
    p = state["position"]
    if state["playing"]:
        p += time.monotonic() - state["since"]
    return p


def get_property(_conn, _sender, _path, interface, name):
    if name == "Identity":
        return GLib.Variant("s", "pipcompose test player")
    if name == "PlaybackStatus":
        return GLib.Variant("s", "Playing" if state["playing"] else "Paused")
    if name == "Position":
        return GLib.Variant("x", int(position() * 1e6))
    if name == "Metadata":
        return GLib.Variant("a{sv}", {
            "mpris:trackid": GLib.Variant("o", "/org/mpris/MediaPlayer2/track/1"),
            "xesam:title": GLib.Variant("s", state["title"]),
            "xesam:artist": GLib.Variant("as", [state["artist"]]),
            "xesam:album": GLib.Variant("s", state["album"]),
            "mpris:length": GLib.Variant("x", int(state["length"] * 1e6)),
        })
    return None


def command(line):
    word, _, rest = line.strip().partition(" ")
    if word == "track":
        title, artist, album, length = rest.split("|")
        state.update(title=title, artist=artist, album=album, length=float(length), position=0.0,
                     since=time.monotonic())
    elif word in ("play", "pause"):
        state["position"] = position()
        state["since"] = time.monotonic()
        state["playing"] = word == "play"
    elif word == "seek":
        state["position"] = float(rest)
        state["since"] = time.monotonic()
    else:
        print(f"unknown command {word!r}", flush=True)
        return
    print("ok", flush=True)


def on_stdin(channel, condition):
    if condition & GLib.IO_HUP:
        loop.quit()
        return False
    line = channel.readline()
    if not line:
        loop.quit()
        return False
    command(line)
    return True


loop = GLib.MainLoop()
conn = Gio.bus_get_sync(Gio.BusType.SESSION, None)
info = Gio.DBusNodeInfo.new_for_xml(XML)
for iface in info.interfaces:
    conn.register_object("/org/mpris/MediaPlayer2", iface, None, get_property, None)
Gio.bus_own_name_on_connection(conn, "org.mpris.MediaPlayer2.fixture", Gio.BusNameOwnerFlags.NONE,
                               lambda *_: print("ready", flush=True),
                               lambda *_: (print("name lost", flush=True), loop.quit()))
GLib.io_add_watch(GLib.IOChannel.unix_new(sys.stdin.fileno()), GLib.PRIORITY_DEFAULT,
                  GLib.IO_IN | GLib.IO_HUP, on_stdin)
loop.run()
