#!/usr/bin/python3
"""The peer for latency over RTSP: plain gst-rtsp-server (test-launch style, one shared live media) serving frames
that carry pipcompose's timecode strip (docs/TIMECODE.md), drawn here in Python as each frame is pushed, encoded
with pipcompose's x264 settings. `pipcompose probe` reads its latency exactly as it reads pipcompose's, so the two
figures differ only by the server and the way frames are made.

Usage: /usr/bin/python3 bench/rtsp_peer_strip.py PORT [WxH] [FPS] [KBPS]   — prints "serving URL" when ready.
"""
import sys, threading, time
import gi
gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import Gst, GstRtspServer, GLib

CELLS = 57


def crc8(data):
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def rows(frame, ms):
    """The strip's two rows of cells (True is white) for a frame number and wall-clock milliseconds."""
    data = (frame & 0xFF_FFFF_FFFF).to_bytes(5, "big") + (ms & 0xFFFF_FFFF_FFFF).to_bytes(6, "big")
    data += bytes([crc8(data)])
    bits = [(b >> i) & 1 == 1 for b in data for i in range(7, -1, -1)]
    out = []
    for row in range(2):
        d = bits[row * 48:(row + 1) * 48]
        out.append([True, False, True, row == 1, row != 1] + d + [sum(d) % 2 == 1, True, False, True])
    return out


class Picture:
    """I420 frames: a grey picture with the strip across its top 12 % (two rows of 30 % of the band each)."""
    def __init__(self, width, height):
        self.w, self.h = width, height
        band = int(height * 0.12)
        self.row_h = max(1, int(band * 0.3))
        self.edges = [round(i * width / CELLS) for i in range(CELLS + 1)]
        self.rest = bytes([60]) * (width * (height - 2 * self.row_h))
        self.chroma = bytes([128]) * (2 * ((width + 1) // 2) * ((height + 1) // 2))

    def frame(self, n, ms):
        luma = bytearray()
        for cells in rows(n, ms):
            line = b"".join((b"\xeb" if white else b"\x10") * (self.edges[i + 1] - self.edges[i])
                            for i, white in enumerate(cells))
            luma += line * self.row_h
        return bytes(luma) + self.rest + self.chroma


def feed(src, picture, fps):
    """Pushes frames into one media's appsrc at the frame rate until the media is gone."""
    start, n = time.monotonic(), 0
    while True:
        due = start + n / fps
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        buf = Gst.Buffer.new_wrapped(picture.frame(n, int(time.time() * 1000)))
        if src.emit("push-buffer", buf) != Gst.FlowReturn.OK:
            return
        n += 1


def main():
    port = sys.argv[1]
    w, h = map(int, (sys.argv[2] if len(sys.argv) > 2 else "1280x720").split("x"))
    fps = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    kbps = int(sys.argv[4]) if len(sys.argv) > 4 else 2488
    Gst.init(None)
    picture = Picture(w, h)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service(port)
    factory = GstRtspServer.RTSPMediaFactory()
    factory.set_shared(True)
    factory.set_latency(0)
    factory.set_launch(
        f"( appsrc name=src is-live=true format=time do-timestamp=true max-buffers=4 leaky-type=downstream "
        f"caps=video/x-raw,format=I420,width={w},height={h},framerate={fps}/1 "
        f"! x264enc tune=zerolatency speed-preset=ultrafast bitrate={kbps} key-int-max={fps} "
        f"! rtph264pay name=pay0 pt=96 config-interval=-1 )")

    def configure(_factory, media):
        src = media.get_element().get_by_name("src")
        threading.Thread(target=feed, args=(src, picture, fps), daemon=True).start()

    factory.connect("media-configure", configure)
    server.get_mount_points().add_factory("/pip", factory)
    server.attach(None)
    print(f"serving rtsp://127.0.0.1:{server.get_bound_port()}/pip", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
