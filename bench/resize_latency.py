#!/usr/bin/env python3
"""Time from a resize request (control API) to the first encoded frame at the new size, over N resizes.

Starts `pipcompose run` (release build) with the control API on a free port, listens to its event stream,
alternates between two sizes, waits for each `resizeEncoded` event (which pipcompose stamps with the time
from the request to the live encoder's first frame of that size), and prints p50/p99/max in milliseconds
and in frame intervals.

A viewer (ffmpeg over RTSP/TCP, decoding to nothing) watches throughout: a picture nobody takes is neither drawn nor
encoded, and a resize would then have no encoded frame to time. With --record, the run also records a fit MP4 (letterboxed into its first size): every resize away from that size
then starts a fixed-size encoder for the file, the path where encoders are made ahead of the frame that applies it.
With --split, it records a split MKV: every resize ends a part and starts the next file, whose pipeline starts off
the frame loop (so it should not show in the latency).

Usage: resize_latency.py BINARY [--count N] [--fps F] [--sizes 1280x720,640x360] [--record] [--split]
"""
import argparse
import json
import secrets
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--fps", type=int, default=30)
    ap.add_argument("--sizes", default="1280x720,640x360")
    ap.add_argument("--record", action="store_true", help="also record a fit MP4 (a fixed-size encoder per resize)")
    ap.add_argument("--split", action="store_true", help="record a split MKV instead (a new file per resize)")
    a = ap.parse_args()
    folder = tempfile.TemporaryDirectory()
    record = ["--record", folder.name + "/resize.mp4"] if a.record else []
    if a.split:  # --record-resize is the run's: the fit MP4 would be split too
        record = ["--record", folder.name + "/split.mkv", "--record-resize", "split"]
    sizes = a.sizes.split(",")
    port = free_port()
    token = secrets.token_hex(24)
    auth = {"Authorization": "Bearer " + token}
    rtsp_port = free_port()
    proc = subprocess.Popen([a.binary, "run", "--control", f"127.0.0.1:{port}", "--control-token", token,
                             "--rtsp", f"127.0.0.1:{rtsp_port}/pip", "--size", sizes[0], "--fps", str(a.fps)] + record,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    base = None
    for line in proc.stdout:
        if line.startswith("control "):
            base = line.split()[1]
        if line.startswith("serving rtsp://"):
            break
    viewer = subprocess.Popen(["ffmpeg", "-nostdin", "-v", "quiet", "-rtsp_transport", "tcp", "-i",
                               f"rtsp://127.0.0.1:{rtsp_port}/pip", "-f", "null", "-"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    events = []
    got = threading.Condition()

    def listen():
        with urllib.request.urlopen(urllib.request.Request(base + "/v1/events", headers=auth)) as r:
            for raw in r:
                line = raw.decode().strip()
                if line.startswith("data: "):
                    ev = json.loads(line[6:])
                    if ev["type"] == "resizeEncoded":
                        with got:
                            events.append(float(ev["details"]["latencyMs"]))
                            got.notify_all()

    threading.Thread(target=listen, daemon=True).start()
    # Let the event stream connect, the viewer play and the first frames go out.
    deadline = time.time() + 20
    while time.time() < deadline:
        st = json.load(urllib.request.urlopen(urllib.request.Request(base + "/v1/status", headers=auth)))
        if st["frame"] > 30 and st["viewers"] >= 1:
            break
        time.sleep(0.1)
    latencies = []
    try:
        for i in range(a.count):
            size = sizes[(i + 1) % len(sizes)]
            before = len(events)
            req = urllib.request.Request(base + "/v1/resize", data=json.dumps({"size": size}).encode(), method="POST",
                                         headers={**auth, "Content-Type": "application/json"})
            urllib.request.urlopen(req).read()
            with got:
                got.wait_for(lambda: len(events) > before, timeout=5)
            if len(events) > before:
                latencies.append(events[-1])
    finally:
        viewer.terminate()
        viewer.wait(timeout=20)
        proc.terminate()
        proc.wait(timeout=20)
    latencies.sort()
    frame_ms = 1000 / a.fps
    pct = lambda p: latencies[min(len(latencies) - 1, int(p * (len(latencies) - 1)))]
    print(json.dumps({"resizes": a.count, "measured": len(latencies), "fps": a.fps, "record": a.record,
                      "p50_ms": round(pct(0.5), 1), "p99_ms": round(pct(0.99), 1), "max_ms": round(latencies[-1], 1),
                      "p50_frames": round(pct(0.5) / frame_ms, 2), "p99_frames": round(pct(0.99) / frame_ms, 2)}))


if __name__ == "__main__":
    main()
