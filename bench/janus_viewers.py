#!/usr/bin/python3
"""Many viewers of a Janus streaming mountpoint in one process, for bench/janus.sh: each is a GStreamer webrtcbin
that speaks the Janus HTTP API as janus.js does (create a session, attach janus.plugin.streaming, "watch" the
mountpoint, answer Janus's offer with "start", a keep-alive every 25 s, "destroy" at the end; events by long poll),
and counts what it receives without decoding (the viewers must cost less than what they measure): video frames
(access units out of rtph264depay, a Python probe) and audio packets (RTP packets into a fakesink, read from its
stats at the end). A viewer stalls when no frame comes for 500 ms after its first (also at the end of the window:
a viewer whose frames stopped counts once). Viewers join STAGGER seconds apart, each in a thread of its own (a slow
join does not delay the next), round-robin over the SERVERs; once all have joined, all watch for SECONDS.

Janus 1.1.2 offers no loopback ICE candidate (deploy/janus/README.md): start it with --ice-enforce-list=ADDR on an
address of this machine; webrtcbin gathers on every interface and pairs with it there. Our answer is sent once ICE
gathering is complete, with its candidates in the SDP and "trickle": false (no trickle requests).

--pid NAME=PID (repeatable): also report each such process's CPU seconds over the same window (from /proc);
machineBusyPct is the whole machine's over it, 100 a core (all cores busy: 100 × cores).

Usage: janus_viewers.py COUNT SECONDS SERVER [SERVER …] [--stagger 0.1] [--id 1] [--pid NAME=PID …]
SERVER is a Janus HTTP API URL, e.g. http://127.0.0.1:8088/janus. Prints one JSON line.
"""
import argparse
import json
import os
import queue
import random
import statistics
import string
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

from webrtc_receiver import STALL, FrameCount, without_upnp  # noqa: E402

Gst.init(None)
KEEPALIVE = 25
TICK = os.sysconf("SC_CLK_TCK")


def transaction():
    return "".join(random.choices(string.ascii_letters + string.digits, k=12))


def machine():
    """(busy, all) ticks of every core together, from /proc/stat (idle and iowait are not busy)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]  # guest time is inside user already
    return sum(v) - v[3] - v[4], sum(v)


def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


class Viewer(FrameCount):
    def __init__(self, pipeline, n, server, mountpoint):
        super().__init__()
        self.n, self.server, self.mountpoint = n, server, mountpoint
        self.session = self.handle = None
        self.error = None
        self.connected = self.joined = False
        self.join_seconds = None
        self.hangup = None
        self.events = queue.Queue()
        self.done = threading.Event()
        self.audio_sink = None
        self.webrtc = Gst.ElementFactory.make("webrtcbin", f"viewer{n}")
        self.webrtc.set_property("bundle-policy", GstWebRTC.WebRTCBundlePolicy.MAX_BUNDLE)
        pipeline.add(self.webrtc)
        without_upnp(self.webrtc)
        self.webrtc.connect("pad-added", self.pad_added)
        self.webrtc.connect("notify::connection-state", self.state)
        self.webrtc.sync_state_with_parent()

    # The Janus API: a POST per request, answered at once ("success" or "ack"); plugin events come by long poll.
    def post(self, path, body):
        body = dict(body, transaction=transaction())
        req = urllib.request.Request(self.server + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            reply = json.load(r)
        if reply.get("janus") == "error":
            raise RuntimeError(f"{body['janus']}: {reply.get('error')}")
        return reply

    def poll(self):
        """Long polls GET /janus/SESSION as janus.js does, until the viewer leaves; events go to self.events."""
        while not self.done.is_set():
            try:
                with urllib.request.urlopen(f"{self.server}/{self.session}?maxev=10&rid={int(time.time() * 1000)}",
                                            timeout=40) as r:
                    got = json.load(r)
            except Exception as e:  # noqa: BLE001
                if not self.done.is_set():
                    self.error = self.error or f"poll: {e}"
                    self.done.wait(1)
                continue
            for ev in got if isinstance(got, list) else [got]:
                if ev.get("janus") == "hangup":
                    self.hangup = ev.get("reason", "hangup")
                self.events.put(ev)

    def keepalive(self):
        if self.session and not self.done.is_set():
            try:
                self.post(f"/{self.session}", {"janus": "keepalive"})
            except Exception as e:  # noqa: BLE001
                self.error = self.error or f"keepalive: {e}"

    def join(self):
        t0 = time.monotonic()
        try:
            self.session = self.post("", {"janus": "create"})["data"]["id"]
            threading.Thread(target=self.poll, daemon=True).start()
            attached = self.post(f"/{self.session}", {"janus": "attach", "plugin": "janus.plugin.streaming"})
            self.handle = attached["data"]["id"]
            self.post(f"/{self.session}/{self.handle}",
                      {"janus": "message", "body": {"request": "watch", "id": self.mountpoint}})
            deadline = time.monotonic() + 20
            offer = None
            while offer is None:
                ev = self.events.get(timeout=max(0.1, deadline - time.monotonic()))
                data = ev.get("plugindata", {}).get("data", {})
                if "error" in data:
                    raise RuntimeError(f"watch: {data['error']}")
                if ev.get("jsep", {}).get("type") == "offer":
                    offer = ev["jsep"]["sdp"]
            answer = self.answer(offer)
            self.post(f"/{self.session}/{self.handle}",
                      {"janus": "message", "body": {"request": "start"},
                       "jsep": {"type": "answer", "sdp": answer, "trickle": False}})
            self.joined = True
            self.join_seconds = time.monotonic() - t0
        except queue.Empty:
            self.error = "no offer from Janus within 20 s"
        except Exception as e:  # noqa: BLE001
            self.error = self.error or f"{type(e).__name__}: {e}"

    def answer(self, offer):
        _, msg = GstSdp.SDPMessage.new_from_text(offer)
        desc = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.OFFER, msg)
        p = Gst.Promise.new()
        self.webrtc.emit("set-remote-description", desc, p)
        p.wait()
        made = Gst.Promise.new()
        self.webrtc.emit("create-answer", None, made)
        made.wait()
        # The answer belongs to the promise's reply: keep both alive until it is set (PyGObject does not copy it).
        reply = made.get_reply()
        answer = reply.get_value("answer")
        if answer is None:
            raise RuntimeError(f"webrtcbin made no answer: {reply.to_string() if reply else None}")
        p = Gst.Promise.new()
        self.webrtc.emit("set-local-description", answer, p)
        p.wait()
        del answer, reply, made
        deadline = time.monotonic() + 5
        while self.webrtc.get_property("ice-gathering-state") != GstWebRTC.WebRTCICEGatheringState.COMPLETE:
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
        return self.webrtc.get_property("local-description").sdp.as_text()

    def leave(self):
        self.done.set()
        if self.session:
            try:
                self.post(f"/{self.session}", {"janus": "destroy"})
            except Exception as e:  # noqa: BLE001
                self.error = self.error or f"destroy: {e}"

    def state(self, *_):
        if self.webrtc.get_property("connection-state") == GstWebRTC.WebRTCPeerConnectionState.CONNECTED:
            self.connected = True

    def audio_packets(self):
        if self.audio_sink is None:
            return 0
        return self.audio_sink.get_property("stats").get_value("rendered") or 0

    def pad_added(self, _, pad):
        caps = pad.get_current_caps() or pad.query_caps(None)
        media = caps.get_structure(0).get_value("media") if caps and caps.get_size() else None
        bin_ = self.webrtc.get_parent()
        sink = Gst.ElementFactory.make("fakesink")
        sink.set_property("sync", False)
        sink.set_property("async", False)
        if media == "video":
            # The depayloader joins each frame's packets into one access unit, so the Python probe runs once a frame.
            depay = Gst.ElementFactory.make("rtph264depay")
            for e in (depay, sink):
                bin_.add(e)
                e.sync_state_with_parent()
            depay.link(sink)
            pad.link(depay.get_static_pad("sink"))
            sink.get_static_pad("sink").add_probe(Gst.PadProbeType.BUFFER, self.frame)
        else:
            # Audio: RTP packets straight into a fakesink, counted by its own stats (no Python per packet).
            bin_.add(sink)
            sink.sync_state_with_parent()
            pad.link(sink.get_static_pad("sink"))
            self.audio_sink = sink


def main():
    a = argparse.ArgumentParser()
    a.add_argument("count", type=int)
    a.add_argument("seconds", type=float)
    a.add_argument("servers", nargs="+", metavar="SERVER")
    a.add_argument("--stagger", type=float, default=0.1)
    a.add_argument("--id", type=int, default=1, help="the mountpoint (default 1)")
    a.add_argument("--pid", action="append", default=[], metavar="NAME=PID",
                   help="report this process's CPU seconds over the window too")
    args = a.parse_args()
    pids = [(name, int(pid)) for name, pid in (p.split("=", 1) for p in args.pid)]
    pipeline = Gst.Pipeline.new("viewers")
    pipeline.set_state(Gst.State.PLAYING)
    loop = GLib.MainLoop()
    threading.Thread(target=loop.run, daemon=True).start()
    viewers, joins = [], []
    t_join = time.monotonic()
    for n in range(args.count):
        v = Viewer(pipeline, n, args.servers[n % len(args.servers)], args.id)
        viewers.append(v)
        t = threading.Thread(target=v.join, daemon=True)
        t.start()
        joins.append(t)
        time.sleep(args.stagger)
    for t in joins:
        t.join(timeout=40)
    join_seconds = time.monotonic() - t_join

    stop_keepalive = threading.Event()

    def keepalives():
        while not stop_keepalive.wait(KEEPALIVE):
            for v in viewers:
                v.keepalive()
    threading.Thread(target=keepalives, daemon=True).start()

    # The window: every viewer has joined (or failed); give the last ones a key frame (one a second) first.
    time.sleep(1.5)
    frames0 = [v.frames for v in viewers]
    audio0 = [v.audio_packets() for v in viewers]
    start = time.monotonic()
    cpu0 = sum(os.times()[:2])
    p0 = {name: ticks(pid) for name, pid in pids}
    m0 = machine()
    time.sleep(args.seconds)
    cpu1 = sum(os.times()[:2])
    p1 = {name: ticks(pid) for name, pid in pids}
    m1 = machine()
    end = time.monotonic()
    window = end - start
    for v in viewers:
        v.end_of_window(end)
    frames = [v.frames - f0 for v, f0 in zip(viewers, frames0)]
    audio = [v.audio_packets() - a0 for v, a0 in zip(viewers, audio0)]
    stop_keepalive.set()
    for v in viewers:
        v.leave()
    pipeline.set_state(Gst.State.NULL)
    loop.quit()
    js = [v.join_seconds for v in viewers if v.join_seconds]
    per_server = {}
    for v, f in zip(viewers, frames):
        s = per_server.setdefault(v.server, {"viewers": 0, "connected": 0, "stalls": 0, "framesMin": None})
        s["viewers"] += 1
        s["connected"] += v.connected
        s["stalls"] += v.stalls
        s["framesMin"] = f if s["framesMin"] is None else min(s["framesMin"], f)
    errors = [f"viewer {v.n}: {v.error}" for v in viewers if v.error]
    print(json.dumps({
        "viewers": args.count, "servers": len(args.servers), "seconds": round(window, 1),
        "joinSeconds": round(join_seconds, 1),
        # One viewer's join: create, attach, watch, Janus's offer, our answer once gathered, start acknowledged.
        "joinMsMedian": round(statistics.median(js) * 1000) if js else None,
        "joinMsMax": round(max(js) * 1000) if js else None,
        "joined": sum(v.joined for v in viewers), "connected": sum(v.connected for v in viewers),
        "failed": len(errors), "errors": errors[:3],
        "hangups": sum(1 for v in viewers if v.hangup), "noFrames": sum(1 for v in viewers if v.first is None),
        "stalls": sum(v.stalls for v in viewers), "viewersWithStalls": sum(1 for v in viewers if v.stalls),
        "longestGapMs": round(max((v.longest_gap for v in viewers), default=0) * 1000, 1),
        "framesMin": min(frames, default=0), "framesMedian": statistics.median(frames) if frames else 0,
        "framesMax": max(frames, default=0), "framesTotal": sum(frames),
        "audioPacketsMin": min(audio, default=0), "audioPacketsMedian": statistics.median(audio) if audio else 0,
        "audioPacketsTotal": sum(audio),
        "receiverCpuSeconds": round(cpu1 - cpu0, 2),
        "machineBusyPct": round(100 * (m1[0] - m0[0]) / max(1, m1[1] - m0[1]) * os.cpu_count(), 1),
        "cpuSeconds": {name: round((p1[name] - p0[name]) / TICK, 2) for name, _ in pids},
        "perServer": list(per_server.values()),
    }))


if __name__ == "__main__":
    sys.exit(main())
