#!/usr/bin/python3
"""Viewers of Janus streaming mountpoints in a real browser: Debian's Chromium, headless, driven by Selenium.

Serves web/janus.html, web/strip.js (found from this file's place in the repository) and Debian's janus.js from a
temporary folder on 127.0.0.1 (an ephemeral port), opens the page with every SERVER (one video each), waits until
every video plays and has read more than --min-readable strips, watches --seconds more of each video's own clock,
and prints one JSON object:

  {"url": …, "servers": [{"server", "state", "frames", "readable", "unreadable", "dropped", "repeated", "p50", "p99",
   "lastFrame", "codec", "width", "height", "fps", "firstPictureMs", "audio", "received", "ice"}, …],
   "sameMoment": {"frames": [lastFrame of each video, read in one script run], "spread": max - min,
                  "spreadMax": the largest spread of the samples taken while watching, "samples": how many}}

with an "error" key when something did not happen in time. Exits 0 either way.

Usage: janus_viewer.py SERVER [SERVER …] [--id ID] [--seconds S] [--min-readable N] [--timeout S]
                       [--janus-js PATH] [--screenshot PNG] [--window WxH]
SERVER is a Janus HTTP API URL, e.g. http://127.0.0.1:8088/janus.
"""
import argparse
import functools
import http.server
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse

from headless_chromium import browser, until

WEB = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "web")
FIELDS = ["server", "state", "frames", "readable", "unreadable", "dropped", "repeated", "p50", "p99", "lastFrame",
          "codec", "width", "height", "fps", "firstPictureMs", "audio", "received", "ice"]


def serve(folder):
    """A static HTTP server for FOLDER on 127.0.0.1 (an ephemeral port), in a thread; returns it."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    a = argparse.ArgumentParser()
    a.add_argument("servers", nargs="+", metavar="SERVER")
    a.add_argument("--id", default="1", help="the mountpoint (default 1)")
    a.add_argument("--seconds", type=float, default=3, help="how long to watch once every video plays")
    a.add_argument("--min-readable", type=int, default=10, help="strips each video must have read before watching")
    a.add_argument("--timeout", type=float, default=40, help="how long the videos may take to play")
    a.add_argument("--janus-js", default="/usr/share/javascript/janus-gateway/janus.js")
    a.add_argument("--screenshot")
    a.add_argument("--window", default="1400x1000")
    args = a.parse_args()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        site, profile = os.path.join(tmp, "site"), os.path.join(tmp, "profile")
        os.mkdir(site)
        for src in [os.path.join(WEB, "janus.html"), os.path.join(WEB, "strip.js"), args.janus_js]:
            shutil.copy(src, os.path.join(site, os.path.basename(src)))
        server = serve(site)
        query = urllib.parse.urlencode([("server", s) for s in args.servers] + [("id", args.id)])
        out["url"] = f"http://127.0.0.1:{server.server_address[1]}/janus.html?{query}"
        n = len(args.servers)
        stats = "return (window.pipStats || []).map((s) => s && ({" + ", ".join(f"{f}: s.{f}" for f in FIELDS) + "}))"
        d = None
        try:
            d = browser(profile, args.window)
            d.get(out["url"])
            try:
                until(d, f"const s = window.pipStats || []; return s.length === {n} && s.every((x) => x && "
                         f"x.state === 'playing' && x.readable > {args.min_readable})",
                      args.timeout, f"not every video played with more than {args.min_readable} readable strips")
            except TimeoutError as e:
                out["error"] = str(e)
            if "error" not in out:
                # Watch until every video itself has played SECONDS more (its own clock, not ours), reading the
                # frame numbers of all videos in one script run (one moment) at each poll.
                t0 = d.execute_script("return [...document.querySelectorAll('video')].map((v) => v.currentTime)")
                end, spread_max, samples = time.monotonic() + args.seconds * 3 + 10, 0, 0
                while True:
                    times, frames = d.execute_script(
                        "return [[...document.querySelectorAll('video')].map((v) => v.currentTime),"
                        " window.pipStats.map((s) => s.lastFrame)]")
                    if all(f is not None for f in frames):
                        spread_max, samples = max(spread_max, max(frames) - min(frames)), samples + 1
                    if all(t >= t0[i] + args.seconds for i, t in enumerate(times)):
                        break
                    if time.monotonic() > end:
                        out["error"] = f"the videos did not play {args.seconds} s more"
                        break
                    time.sleep(0.2)
                frames = d.execute_script("return window.pipStats.map((s) => s.lastFrame)")
                known = [f for f in frames if f is not None]
                out["sameMoment"] = {"frames": frames, "spread": max(known) - min(known) if known else None,
                                     "spreadMax": spread_max, "samples": samples}
            out["servers"] = d.execute_script(stats)
            if args.screenshot:
                d.save_screenshot(args.screenshot)
        except Exception as e:  # the browser or the page failed: say so in the JSON, as the usage promises
            out["error"] = f"{type(e).__name__}: {e}"
            if d is not None and "servers" not in out:
                try:
                    out["servers"] = d.execute_script(stats)
                except Exception:
                    pass
        finally:
            if d is not None:
                try:
                    d.get("about:blank")  # janus.js ends its Janus sessions as the page goes
                except Exception:
                    pass
                d.quit()
            server.shutdown()
            server.server_close()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
