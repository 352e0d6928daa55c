#!/usr/bin/python3
"""Many WebRTC (WHEP) viewers in one process, for bench/webrtc.sh: each is a GStreamer webrtcbin that offers to
receive H.264, posts its offer to pipcompose's /v1/whep, and counts the RTP packets and frames (marker bits) it
receives, without decoding (the viewers must cost less than the server they measure). A viewer stalls when no frame
comes for 500 ms after its first. Viewers join STAGGER seconds apart, all watch for SECONDS, then leave with DELETE.

Usage: whep_viewers.py BASE_URL COUNT SECONDS [--stagger 0.1] [--token T]   — prints one JSON line.
"""
import argparse
import json
import sys
import threading
import time
import urllib.error
import urllib.request

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("GstSdp", "1.0")
from gi.repository import GLib, Gst, GstSdp, GstWebRTC  # noqa: E402

Gst.init(None)
STALL = 0.5


class Viewer:
    def __init__(self, pipeline, n, base, token):
        self.n, self.base, self.token = n, base, token
        self.frames = self.packets = self.stalls = 0
        self.first = self.last = None
        self.longest_gap = 0.0
        self.location = None
        self.error = None
        self.connected = False
        self.lock = threading.Lock()
        self.webrtc = Gst.ElementFactory.make("webrtcbin", f"viewer{n}")
        self.webrtc.set_property("bundle-policy", GstWebRTC.WebRTCBundlePolicy.MAX_BUNDLE)
        pipeline.add(self.webrtc)
        caps = Gst.Caps.from_string("application/x-rtp,media=video,encoding-name=H264,clock-rate=90000,payload=102,"
                                    "packetization-mode=(string)1,profile-level-id=(string)42e01f")
        self.webrtc.emit("add-transceiver", GstWebRTC.WebRTCRTPTransceiverDirection.RECVONLY, caps)
        self.webrtc.connect("pad-added", self.pad_added)
        self.webrtc.connect("notify::connection-state", self.state)
        self.webrtc.sync_state_with_parent()

    def request(self, method, url, body=None):
        headers = {"Content-Type": "application/sdp"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        req = urllib.request.Request(url, data=body, method=method, headers=headers)
        return urllib.request.urlopen(req, timeout=30)

    def join(self):
        made = Gst.Promise.new()
        self.webrtc.emit("create-offer", None, made)
        made.wait()
        # The offer belongs to the promise's reply: keep both alive until it is set (PyGObject does not copy it).
        reply = made.get_reply()
        offer = reply.get_value("offer")
        p = Gst.Promise.new()
        self.webrtc.emit("set-local-description", offer, p)
        p.wait()
        del offer, reply, made
        deadline = time.monotonic() + 5
        while self.webrtc.get_property("ice-gathering-state") != GstWebRTC.WebRTCICEGatheringState.COMPLETE:
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
        sdp = self.webrtc.get_property("local-description").sdp.as_text()
        try:
            r = self.request("POST", self.base + "/v1/whep", sdp.encode())
            self.location = r.headers["Location"]
            answer = r.read().decode()
        except urllib.error.HTTPError as e:
            self.error = f"{e.code} {e.read().decode()[:200]}"
            return
        _, msg = GstSdp.SDPMessage.new_from_text(answer)
        desc = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.ANSWER, msg)
        p = Gst.Promise.new()
        self.webrtc.emit("set-remote-description", desc, p)
        p.wait()

    def leave(self):
        if self.location:
            try:
                self.request("DELETE", self.base + self.location).read()
            except Exception as e:  # noqa: BLE001
                self.error = self.error or f"DELETE: {e}"

    def state(self, *_):
        if self.webrtc.get_property("connection-state") == GstWebRTC.WebRTCPeerConnectionState.CONNECTED:
            self.connected = True

    def pad_added(self, _, pad):
        sink = Gst.ElementFactory.make("fakesink")
        sink.set_property("sync", False)
        sink.set_property("async", False)
        self.webrtc.get_parent().add(sink)
        sink.sync_state_with_parent()
        pad.link(sink.get_static_pad("sink"))
        sink.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, self.packet)

    def packet(self, pad, info):
        now = time.monotonic()
        buf = info.get_buffer()
        ok, rtp = gi.repository.GstRtp.RTPBuffer.map(buf, Gst.MapFlags.READ) if HAVE_RTP else (False, None)
        marker = True
        if ok:
            marker = rtp.get_marker()
            rtp.unmap()
        with self.lock:
            self.packets += 1
            if marker:
                if self.last is not None:
                    gap = now - self.last
                    self.longest_gap = max(self.longest_gap, gap)
                    if gap > STALL:
                        self.stalls += 1
                self.first = self.first or now
                self.last = now
                self.frames += 1
        return Gst.PadProbeReturn.OK


try:
    gi.require_version("GstRtp", "1.0")
    from gi.repository import GstRtp  # noqa: F401,E402
    HAVE_RTP = True
except (ValueError, ImportError):
    HAVE_RTP = False


def main():
    a = argparse.ArgumentParser()
    a.add_argument("base")
    a.add_argument("count", type=int)
    a.add_argument("seconds", type=float)
    a.add_argument("--stagger", type=float, default=0.1)
    a.add_argument("--token")
    args = a.parse_args()
    pipeline = Gst.Pipeline.new("viewers")
    pipeline.set_state(Gst.State.PLAYING)
    loop = GLib.MainLoop()
    threading.Thread(target=loop.run, daemon=True).start()
    viewers = []
    for n in range(args.count):
        v = Viewer(pipeline, n, args.base, args.token)
        v.join()
        viewers.append(v)
        time.sleep(args.stagger)
    start = time.monotonic()
    time.sleep(args.seconds)
    window = time.monotonic() - start
    for v in viewers:
        v.leave()
    pipeline.set_state(Gst.State.NULL)
    loop.quit()
    frames = [v.frames for v in viewers]
    print(json.dumps({
        "viewers": args.count, "seconds": round(window, 1),
        "refused": sum(1 for v in viewers if v.error), "errors": [v.error for v in viewers if v.error][:3],
        "connected": sum(1 for v in viewers if v.connected),
        "stalls": sum(v.stalls for v in viewers), "viewersWithStalls": sum(1 for v in viewers if v.stalls),
        "longestGapMs": round(max((v.longest_gap for v in viewers), default=0) * 1000, 1),
        "framesMin": min(frames, default=0), "framesMax": max(frames, default=0),
        "packets": sum(v.packets for v in viewers),
    }))


if __name__ == "__main__":
    sys.exit(main())
