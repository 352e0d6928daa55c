#!/usr/bin/env python3
"""A resize storm against a running pipcompose: COUNT resizes through the control API at RATE a second, over
random sizes (tiny, odd, portrait, up to 4K, repeats and regular returns to the first size), optionally while
RTSP viewers (ffmpeg) join and leave.

  resize_storm.py CONTROL_URL --count N --rate R [--seed S] [--home WxH] [--viewers RTSP_URL] [--max-side PX]

Every request's answer time is measured. Prints one JSON line at the end:
  {"resizes": N, "refused": K, "slowestMs": X, "p99Ms": Y, "viewers": V, "viewerFailures": [...]}
A refused size (the server says why) is counted, not an error: odd sizes must be refused or rounded, never crash.
"""
import argparse
import json
import random
import subprocess
import sys
import time
import urllib.error
import urllib.request


def sizes(rng, home, max_side):
    w, h = home
    picks = [
        lambda: (rng.randint(16, 64) * 2, rng.randint(16, 64) * 2),         # tiny
        lambda: (rng.randint(80, 1000) * 2 + 1, rng.randint(80, 600) * 2 + 1),  # odd
        lambda: (rng.randint(90, 540) * 2, rng.randint(160, 960) * 2),       # portrait
        lambda: (min(3840, max_side), min(2160, max_side * 9 // 16)),         # 4K (or the cap)
        lambda: (w, h),                                                        # the file's own size
        lambda: (rng.randint(160, 960) * 2, rng.randint(90, 540) * 2),        # ordinary
    ]
    last = (w, h)
    while True:
        if rng.random() < 0.1:
            yield last                                                         # a repeat
            continue
        last = rng.choice(picks)()
        yield last


TOKEN = None


def post(url, body, timeout=5):
    headers = {"Content-Type": "application/json"}
    if TOKEN:
        headers["Authorization"] = "Bearer " + TOKEN
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers=headers)
    started = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            r.read()
            ok = True
    except urllib.error.HTTPError as e:
        e.read()
        ok = e.code < 500
        if not ok:
            raise
        ok = False
    return ok, (time.monotonic() - started) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("control")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--home", default="640x360")
    ap.add_argument("--max-side", type=int, default=3840)
    ap.add_argument("--viewers")
    ap.add_argument("--token", help="the control API's bearer token")
    a = ap.parse_args()
    global TOKEN
    TOKEN = a.token
    rng = random.Random(a.seed)
    home = tuple(int(v) for v in a.home.split("x"))
    gen = sizes(rng, home, a.max_side)
    times, refused = [], 0
    viewers, failures, started_viewers = [], [], 0
    start = time.monotonic()
    for i in range(a.count):
        # Paced by the clock, not by sleeping a fixed amount after each request (the storm's rate, not a wait).
        due = start + i / a.rate
        while time.monotonic() < due:
            time.sleep(max(0.0, due - time.monotonic()))
        w, h = next(gen)
        ok, ms = post(a.control + "/v1/resize", {"size": f"{w}x{h}"})
        times.append(ms)
        refused += 0 if ok else 1
        if a.viewers and i % 100 == 0:
            # A viewer joins every 5 s for ~150 frames; the ones before it are left to finish or leave.
            viewers.append(subprocess.Popen(
                ["ffmpeg", "-v", "error", "-rtsp_transport", "tcp" if started_viewers % 2 == 0 else "udp",
                 "-i", a.viewers, "-frames:v", "150", "-f", "null", "-"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
            started_viewers += 1
    # Home again at the end, so the last frames are at the file's own size.
    post(a.control + "/v1/resize", {"size": f"{home[0]}x{home[1]}"})
    for v in viewers:
        try:
            _, err = v.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            v.kill()
            _, err = v.communicate()
            failures.append("a viewer did not finish in 60 s")
            continue
        if v.returncode != 0:
            failures.append(err.decode(errors="replace")[-300:])
    times.sort()
    print(json.dumps({"resizes": a.count, "refused": refused, "slowestMs": round(times[-1], 1),
                      "p99Ms": round(times[int(len(times) * 0.99) - 1], 1), "viewers": started_viewers,
                      "viewerFailures": failures}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
