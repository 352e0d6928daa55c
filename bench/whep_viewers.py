#!/usr/bin/python3
"""Many WebRTC (WHEP) viewers in one process, for bench/webrtc.sh: each is a GStreamer webrtcbin that offers to
receive H.264, posts its offer to pipcompose's /v1/whep, and counts the frames it receives (access units out of
the depayloader), without decoding (the viewers must cost less than the server they measure). A viewer stalls when no frame
comes for 500 ms after its first. Viewers join STAGGER seconds apart, all watch for SECONDS, then leave with DELETE.

Usage: whep_viewers.py BASE_URL COUNT SECONDS [--stagger 0.1] [--token T]   — prints one JSON line.
"""
import argparse
import json
import os
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

from webrtc_receiver import FrameCount, without_upnp  # noqa: E402

Gst.init(None)
class Viewer(FrameCount):
    def __init__(self, pipeline, n, base, token):
        super().__init__()
        self.n, self.base, self.token = n, base, token
        self.location = None
        self.error = None
        self.connected = False
        self.webrtc = Gst.ElementFactory.make("webrtcbin", f"viewer{n}")
        self.webrtc.set_property("bundle-policy", GstWebRTC.WebRTCBundlePolicy.MAX_BUNDLE)
        pipeline.add(self.webrtc)
        caps = Gst.Caps.from_string("application/x-rtp,media=video,encoding-name=H264,clock-rate=90000,payload=102,"
                                    "packetization-mode=(string)1,profile-level-id=(string)42e01f")
        without_upnp(self.webrtc)
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
        # The depayloader joins each frame's packets into one access unit, so the probe (Python, under the GIL) runs
        # once a frame instead of once a packet: at 50 viewers that is 1 500 calls a second instead of ~20 000.
        bin_ = self.webrtc.get_parent()
        depay = Gst.ElementFactory.make("rtph264depay")
        sink = Gst.ElementFactory.make("fakesink")
        sink.set_property("sync", False)
        sink.set_property("async", False)
        for e in (depay, sink):
            bin_.add(e)
            e.sync_state_with_parent()
        depay.link(sink)
        pad.link(depay.get_static_pad("sink"))
        self.depay = depay
        sink.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, self.frame)


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
    cpu0 = sum(os.times()[:2])
    time.sleep(args.seconds)
    cpu1 = sum(os.times()[:2])
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
        "framesMin": min(frames, default=0), "framesMax": max(frames, default=0), "framesTotal": sum(frames),
        "receiverCpuSeconds": round(cpu1 - cpu0, 2),
    }))


if __name__ == "__main__":
    sys.exit(main())
