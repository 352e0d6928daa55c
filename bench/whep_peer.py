#!/usr/bin/python3
"""The peer of pipcompose's WebRTC fan-out, for bench/webrtc.sh: plain GStreamer in Python serving WHEP the way
GStreamer's own webrtc examples do — one live x264 stream (same settings as pipcompose at 1280x720@30: ultrafast,
zerolatency, 2488 kbit/s, a key frame a second, constrained baseline) on a tee, and per viewer a leaky queue,
rtph264pay and a webrtcbin. No drawing: what it costs beyond x264 is the fan-out alone.

With --rtsp URL it fans out that stream instead (pipcompose's own, read over RTSP: the same bits, so the same
packets per viewer).

Usage: whep_peer.py PORT [--rtsp URL]   — serves POST /v1/whep and DELETE /v1/whep/ID on 127.0.0.1:PORT; prints "ready".
"""
import ctypes
import itertools
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("GstSdp", "1.0")
from gi.repository import GLib, Gst, GstSdp, GstWebRTC  # noqa: E402

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from webrtc_receiver import GOBJECT, without_upnp  # noqa: E402

Gst.init(None)
GOBJECT.g_signal_emit_by_name.restype = None


def loopback_only(webrtc):
    """ICE on 127.0.0.1 only, as pipcompose offers (loopback and its listening address). Through C: see
    without_upnp."""
    ice, added = ctypes.c_void_p(), ctypes.c_int(0)
    GOBJECT.g_object_get(hash(webrtc), b"ice-agent", ctypes.byref(ice), None)
    GOBJECT.g_signal_emit_by_name(ice, b"add-local-ip-address", ctypes.c_char_p(b"127.0.0.1"), ctypes.byref(added))
    GOBJECT.g_object_unref(ice)


SOURCE = ("videotestsrc is-live=true pattern=ball ! video/x-raw,width=1280,height=720,framerate=30/1,format=I420 ! "
          "x264enc tune=zerolatency speed-preset=ultrafast bitrate=2488 key-int-max=30 ! "
          "video/x-h264,profile=constrained-baseline ! h264parse config-interval=-1 ! tee name=fan allow-not-linked=true")
# --rtsp URL: the very stream pipcompose encodes, read over RTSP, so both fan out the same bits.
RELAY = ("rtspsrc location={url} latency=0 protocols=tcp ! rtph264depay ! h264parse config-interval=-1 ! "
         "video/x-h264,stream-format=byte-stream,alignment=au ! tee name=fan allow-not-linked=true")
VIEWER = ("queue leaky=downstream max-size-buffers=30 max-size-bytes=0 max-size-time=0 ! "
          "rtph264pay config-interval=0 aggregate-mode=zero-latency mtu=1200 pt={pt} ! "
          "application/x-rtp,media=video,encoding-name=H264,clock-rate=90000,payload={pt} ! "
          "webrtcbin name=peer bundle-policy=max-bundle")


class Peer:
    def __init__(self, rtsp=None):
        self.pipeline = Gst.parse_launch(RELAY.format(url=rtsp) if rtsp else SOURCE)
        self.fan = self.pipeline.get_by_name("fan")
        self.viewers = {}
        self.lock = threading.Lock()
        self.numbers = itertools.count(1)
        self.pipeline.set_state(Gst.State.PLAYING)

    def answer(self, offer_text):
        _, sdp = GstSdp.SDPMessage.new_from_text(offer_text)
        pt = 102
        for i in range(sdp.medias_len()):
            m = sdp.get_media(i)
            for j in range(m.attributes_len()):
                a = m.get_attribute(j)
                if a.key == "rtpmap" and "H264/90000" in a.value:
                    pt = int(a.value.split()[0])
                    break
        name = f"viewer{next(self.numbers)}"
        viewer = Gst.parse_bin_from_description(VIEWER.format(pt=pt), True)
        viewer.set_name(name)
        webrtc = viewer.get_by_name("peer")
        without_upnp(webrtc)
        loopback_only(webrtc)
        with self.lock:
            self.pipeline.add(viewer)
            viewer.sync_state_with_parent()
            self.viewers[name] = viewer
        offer = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.OFFER, sdp)
        p = Gst.Promise.new()
        webrtc.emit("set-remote-description", offer, p)
        p.wait()
        p = Gst.Promise.new()
        webrtc.emit("create-answer", None, p)
        p.wait()
        reply = p.get_reply()
        answer = reply.get_value("answer")
        gathered = threading.Event()
        webrtc.connect("notify::ice-gathering-state", lambda w, _: gathered.set()
                       if w.get_property("ice-gathering-state") == GstWebRTC.WebRTCICEGatheringState.COMPLETE else None)
        p = Gst.Promise.new()
        webrtc.emit("set-local-description", answer, p)
        p.wait()
        del answer, reply
        if webrtc.get_property("ice-gathering-state") != GstWebRTC.WebRTCICEGatheringState.COMPLETE:
            gathered.wait(5)
        # Fed only once answered: webrtcbin 1.22 matches the offer against the caps that reached its pad, and the
        # payloader's (profile-level-id 42c01f, from x264's SPS) do not match a browser's 42e01f, so a viewer fed
        # before the offer is answered "receive only" and gets nothing.
        with self.lock:
            self.fan.link(viewer)
        return name, webrtc.get_property("local-description").sdp.as_text()

    def end(self, name):
        with self.lock:
            viewer = self.viewers.pop(name, None)
        if viewer is None:
            return False
        sink = viewer.get_static_pad("sink")
        tee_pad = sink.get_peer()
        tee_pad.unlink(sink)
        self.fan.release_request_pad(tee_pad)
        viewer.set_state(Gst.State.NULL)
        self.pipeline.remove(viewer)
        return True


def main():
    peer = Peer(sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--rtsp" else None)
    loop = GLib.MainLoop()
    threading.Thread(target=loop.run, daemon=True).start()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
            name, sdp = peer.answer(body)
            out = sdp.encode()
            self.send_response(201)
            self.send_header("Content-Type", "application/sdp")
            self.send_header("Location", "/v1/whep/" + name)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def do_DELETE(self):
            ok = peer.end(self.path.rsplit("/", 1)[-1])
            self.send_response(200 if ok else 404)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
