#!/usr/bin/python3
"""A deployment's auth service, as pipcompose's --auth-hook asks it: POSTed a JSON question (action, protocol,
method, path, link or token, remote), it answers 200 to what its rules allow and 403 to the rest.

Usage: auth_hook.py [--allow TOKEN:ACTION[:USER]]... [--links] [--hang TOKEN]

Prints "listening PORT" (loopback, a free port), then "asked QUESTION" (the JSON as received, one line) for each
question. --allow lets TOKEN do ACTION (watch or drive), naming it USER in the answer when given; --links lets in
any watch link pipcompose asks about; --hang never answers about TOKEN (a hook that is stuck).
"""
import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--allow", action="append", default=[])
    a.add_argument("--links", action="store_true")
    a.add_argument("--hang", action="append", default=[])
    args = a.parse_args()
    rules = {}
    for rule in args.allow:
        token, action, *user = rule.split(":")
        rules[(token, action)] = user[0] if user else None
    hung = threading.Event()

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                q = json.loads(body)
            except ValueError:
                self.answer(400, b"not JSON")
                return
            print("asked " + json.dumps(q, sort_keys=True), flush=True)
            if self.headers.get("Content-Type") != "application/json":
                self.answer(400, b"not declared JSON")
            elif q.get("token") in args.hang:
                hung.wait()
            elif q.get("link") and args.links:
                self.answer(200, b"")
            elif (q.get("token"), q.get("action")) in rules:
                user = rules[(q.get("token"), q.get("action"))]
                self.answer(200, json.dumps({"user": user}).encode() if user else b"{}")
            else:
                self.answer(403, f"{q.get('token') or 'nobody'} may not {q.get('action')} here".encode())

        def answer(self, status, body):
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    server.daemon_threads = True
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
