#!/usr/bin/python3
"""An RTSP server that accepts RECORD (ANNOUNCE + RECORD from a pushing client) and writes the H.264 it
receives to a Matroska file: the receiving end for pipcompose's `--push rtsp://` test.

Built on gst-rtsp-server through GObject introspection (Debian's python3-gi), so it is the same server
library a real deployment would run. Prints "listening PORT" when ready; SIGTERM ends it and finalizes the file.

Usage: rtsp_record_server.py PORT OUTPUT.mkv
"""
import signal
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

Gst.init(None)
port, output = sys.argv[1], sys.argv[2]

server = GstRtspServer.RTSPServer()
server.set_address("127.0.0.1")
server.set_service(port)
factory = GstRtspServer.RTSPMediaFactory()
factory.set_transport_mode(GstRtspServer.RTSPTransportMode.RECORD)
factory.set_launch(
    f"( decodebin name=depay0 ! videoconvert ! x264enc tune=zerolatency speed-preset=ultrafast "
    f"! h264parse ! matroskamux ! filesink location={output} sync=false )"
)
factory.set_latency(0)
# EOS on unprepare, so matroskamux finalizes the file when the client tears down.
factory.set_eos_shutdown(True)
server.get_mount_points().add_factory("/live", factory)
if server.attach(None) == 0:
    print("cannot listen", flush=True)
    sys.exit(1)
loop = GLib.MainLoop()
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
print(f"listening {port}", flush=True)
loop.run()
