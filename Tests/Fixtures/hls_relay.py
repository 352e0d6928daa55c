#!/usr/bin/python3
"""A slow network between an HLS server and its player: an HTTP relay whose bandwidth follows a schedule.

Forwards every GET to UPSTREAM (a base URL; the path after the relay's / is appended) and sends the answer back no
faster than the phase of the schedule allows, as a congested link would. The schedule starts with the first request:
"fast:12,slow:20,fast:30" is 12 s unlimited, then 20 s at --slow-kbps, then 30 s unlimited (the last phase lasts).

Usage: hls_relay.py UPSTREAM --schedule SPEC --slow-kbps N
Prints "relay http://127.0.0.1:PORT/" once listening, then one JSON line per request on stdout: the path, bytes,
the seconds it took and the phase.
"""
import argparse
import json
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    a = argparse.ArgumentParser()
    a.add_argument("upstream")
    a.add_argument("--schedule", required=True)
    a.add_argument("--slow-kbps", type=float, required=True)
    args = a.parse_args()
    phases = []
    for part in args.schedule.split(","):
        name, seconds = part.split(":")
        phases.append((name, float(seconds)))
    start = [None]
    lock = threading.Lock()

    def phase_now():
        with lock:
            if start[0] is None:
                start[0] = time.monotonic()
            t = time.monotonic() - start[0]
        for name, seconds in phases:
            if t < seconds:
                return name
            t -= seconds
        return phases[-1][0]

    class Relay(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def do_GET(self):
            began = time.monotonic()
            phase = phase_now()
            try:
                with urllib.request.urlopen(args.upstream.rstrip("/") + self.path, timeout=10) as r:
                    body, status, ctype = r.read(), r.status, r.headers.get("Content-Type", "application/octet-stream")
            except urllib.error.HTTPError as e:
                body, status, ctype = e.read(), e.code, "text/plain"
            except OSError as e:
                body, status, ctype = str(e).encode(), 502, "text/plain"
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            # A slow link: 4 KiB at a time, each no sooner than the bandwidth allows.
            chunk = 4096
            try:
                for i in range(0, len(body), chunk):
                    piece = body[i:i + chunk]
                    self.wfile.write(piece)
                    if phase_now() == "slow":
                        # The link's pace (the bandwidth it simulates), not a wait for anything to happen.
                        time.sleep(len(piece) * 8 / (args.slow_kbps * 1000))
                self.wfile.flush()
            except OSError:
                return
            print(json.dumps({"path": self.path, "bytes": len(body), "seconds": round(time.monotonic() - began, 3),
                              "phase": phase, "status": status}), flush=True)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Relay)
    server.daemon_threads = True
    print(f"relay http://127.0.0.1:{server.server_address[1]}/", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
