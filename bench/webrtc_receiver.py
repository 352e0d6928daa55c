"""What bench/whep_viewers.py and bench/janus_viewers.py share: webrtcbin receivers that count frames (access units
out of a depayloader, no decoding) and their stalls (STALL seconds without a frame after the first)."""
import ctypes
import threading
import time

import gi

gi.require_version("Gst", "1.0")
from gi.repository import Gst  # noqa: E402

STALL = 0.5
GOBJECT = ctypes.CDLL("libgobject-2.0.so.0")
GOBJECT.g_object_get.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
GOBJECT.g_object_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
GOBJECT.g_object_unref.argtypes = [ctypes.c_void_p]


def without_upnp(webrtc):
    """libnice tries UPnP by default: each gathering then waits out its timeout for routers that are not there.
    Through C, because PyGObject drops webrtcbin's own reference to the ICE object it reads from "ice-agent"."""
    ice, agent = ctypes.c_void_p(), ctypes.c_void_p()
    GOBJECT.g_object_get(hash(webrtc), b"ice-agent", ctypes.byref(ice), None)
    GOBJECT.g_object_get(ice, b"agent", ctypes.byref(agent), None)
    GOBJECT.g_object_set(agent, b"upnp", 0, None)
    GOBJECT.g_object_unref(agent)
    GOBJECT.g_object_unref(ice)


class FrameCount:
    """Frames seen by a pad probe (`frame`), the longest gap between two and the stalls; thread-safe."""

    def __init__(self):
        self.frames = self.stalls = 0
        self.first = self.last = None
        self.longest_gap = 0.0
        self.lock = threading.Lock()

    def frame(self, pad, info):
        now = time.monotonic()
        with self.lock:
            if self.last is not None:
                gap = now - self.last
                self.longest_gap = max(self.longest_gap, gap)
                if gap > STALL:
                    self.stalls += 1
            self.first = self.first or now
            self.last = now
            self.frames += 1
        return Gst.PadProbeReturn.OK

    def end_of_window(self, now):
        """A viewer whose frames stopped before the window ended has stalled too (no later frame shows the gap)."""
        with self.lock:
            if self.last is not None and now - self.last > STALL:
                self.stalls += 1
                self.longest_gap = max(self.longest_gap, now - self.last)
