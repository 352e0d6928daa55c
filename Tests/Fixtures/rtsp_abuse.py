#!/usr/bin/env python3
"""Things an RTSP server meets on an open port, for tests that check every other viewer keeps its picture.

  rtsp_abuse.py fuzz URL --count N [--seed S]
      Sends N malformed or hostile requests over many connections: random bytes, huge and negative
      Content-Length, missing and bad CSeq, unknown methods, sessions and streams, stray '$' frames, non-ASCII and
      overlong URLs, SETUP before DESCRIBE, PLAY without SETUP, headers without end. Prints "sent N" and how many
      got an answer; exits 0 (the test judges the server by what its real viewers see, not by the replies).

  rtsp_abuse.py stall URL
      A viewer that sets up an interleaved (TCP) session, sends PLAY, and then never reads: the server's sends to it
      back up. Prints "stalled" once PLAY is sent and holds the connection until killed.

  rtsp_abuse.py setup URL SUFFIX
      One DESCRIBE of URL, then a SETUP of URL + SUFFIX (e.g. /stream=99): prints the status line of each reply.

  rtsp_abuse.py describe URL
      A client that only asks (a health check): DESCRIBE and SETUP, never PLAY. Prints "described" and holds the
      connection until killed.

  rtsp_abuse.py pause URL
      A viewer that plays over TCP until 30 RTP packets came, then sends PAUSE and keeps reading. Prints
      "played N" and, once the PAUSE is answered, "paused"; holds the connection until killed.

  rtsp_abuse.py together URL SECONDS
      Two viewers set up every stream, one over UDP and one over TCP, then send their PLAYs in one go (the server
      handles them back to back), and count the RTP packets each gets per stream for SECONDS. Prints
      "udp N N tcp N N" (packets per stream, in SDP order).
"""
import select
import time
import random
import signal
import socket
import sys
from urllib.parse import urlparse


def connect(url, timeout=2.0):
    u = urlparse(url)
    s = socket.create_connection((u.hostname, u.port or 554), timeout=timeout)
    return s


def request(method, url, cseq, headers=(), body=b""):
    lines = [f"{method} {url} RTSP/1.0", f"CSeq: {cseq}", *headers]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape") + body


def read_reply(s):
    """One reply's head and body (by Content-Length), or what came before the connection closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            return data.decode("latin-1")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    return (head + b"\r\n\r\n" + rest[:length]).decode("latin-1")


def session_of(reply):
    for line in reply.split("\r\n"):
        if line.lower().startswith("session:"):
            return line.split(":", 1)[1].strip().split(";")[0]
    return None


def hostile(url, rng):
    """One malformed request (bytes)."""
    u = urlparse(url)
    base = f"rtsp://{u.hostname}:{u.port}"
    choices = [
        lambda: bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 2048))),
        lambda: request("DESCRIBE", url, 1, ["Content-Length: 99999999999999999999"]),
        lambda: request("DESCRIBE", url, 1, ["Content-Length: -5"]) + b"xxxxx",
        lambda: request("OPTIONS", url, "abc"),
        lambda: ("OPTIONS " + url + " RTSP/1.0\r\n\r\n").encode(),
        lambda: request("BREW", url, 2),
        lambda: request("SETUP", url + "/stream=99", 3, ["Transport: RTP/AVP/TCP;unicast;interleaved=0-1"]),
        lambda: request("SETUP", url + "/stream=-1", 3, ["Transport: RTP/AVP;unicast;client_port=1-2"]),
        lambda: request("SETUP", url, 3, ["Transport: garbage;;;==="]),
        lambda: request("PLAY", url, 4, ["Session: 12345678"]),
        lambda: request("TEARDOWN", url, 5, ["Session: " + "9" * 200]),
        lambda: request("GET_PARAMETER", url, 6, ["Session: nope"]),
        lambda: b"$\x00\xff\xff" + bytes(rng.getrandbits(8) for _ in range(64)),
        lambda: b"$\x07\x00\x10" + b"0123456789abcdef" + request("OPTIONS", url, 7),
        lambda: request("DESCRIBE", base + "/pïp/\u00e9\u4e2d", 8),
        lambda: request("DESCRIBE", base + "/" + "a" * 20000, 9),
        lambda: request("DESCRIBE", url, 10, ["X-" + "h" * 10 + ": " + "v" * 60000]),
        lambda: request("DESCRIBE", url, 11, ["Accept: application/sdp"] * 300),
        lambda: request("DESCRIBE", "*", 12),
        lambda: request("DESCRIBE", "http://example.invalid/pip", 13),
        lambda: request("ANNOUNCE", url, 14, ["Content-Type: application/sdp"], b"v=0\r\nm=video 0 RTP/AVP 96\r\n"),
        lambda: request("RECORD", url, 15, ["Session: 1"]),
        lambda: request("SET_PARAMETER", url, 16, ["Content-Type: text/parameters"], b"\x00" * 100),
        lambda: b"DESCRIBE " + url.encode() + b" RTSP/1.0\r\nCSeq: 17\r\n",  # never ends
        lambda: request("DESCRIBE", url, 18).replace(b"RTSP/1.0", b"RTSP/9.9"),
        lambda: request("OPTIONS", url, 19).replace(b"\r\n", b"\n"),
    ]
    return rng.choice(choices)()


def fuzz(url, count, seed):
    rng = random.Random(seed)
    sent = answered = 0
    conn = None
    while sent < count:
        # Each attempt counts once, whether the server answers, says nothing, or closes the connection (a
        # server may close a connection it does not like).
        sent += 1
        try:
            if conn is None or rng.random() < 0.3:
                if conn:
                    conn.close()
                conn = connect(url, timeout=0.05)
            conn.sendall(hostile(url, rng))
            try:
                if conn.recv(65536):
                    answered += 1
            except socket.timeout:
                pass
        except OSError:
            conn = None
    # A SETUP before any DESCRIBE on a fresh connection, then a PLAY with the session it gives.
    s = connect(url)
    s.sendall(request("SETUP", url + "/stream=0", 1, ["Transport: RTP/AVP/TCP;unicast;interleaved=4-5"]))
    session = session_of(read_reply(s))
    if session:
        s.sendall(request("PLAY", url, 2, ["Session: " + session]))
        s.sendall(request("TEARDOWN", url, 3, ["Session: " + session]))
    s.close()
    print(f"sent {sent}, answered {answered}", flush=True)


def stall(url):
    s = connect(url, timeout=5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(request("DESCRIBE", url, 1, ["Accept: application/sdp"]))
    sdp = read_reply(s)
    control = "stream=0"
    for line in sdp.split("\r\n"):
        if line.startswith("a=control:") and "stream=" in line:
            control = line.split(":", 1)[1]
    target = control if control.startswith("rtsp://") else url.rstrip("/") + "/" + control
    s.sendall(request("SETUP", target, 2, ["Transport: RTP/AVP/TCP;unicast;interleaved=0-1"]))
    session = session_of(read_reply(s))
    s.sendall(request("PLAY", url, 3, ["Session: " + (session or "")]))
    print("stalled", flush=True)
    # Hold the connection, never reading, until the test kills this process.
    signal.pause()


def setup(url, suffix):
    s = connect(url)
    s.sendall(request("DESCRIBE", url, 1, ["Accept: application/sdp"]))
    print(read_reply(s).split("\r\n")[0], flush=True)
    s.sendall(request("SETUP", url + suffix, 2, ["Transport: RTP/AVP/TCP;unicast;interleaved=0-1"]))
    print(read_reply(s).split("\r\n")[0], flush=True)
    s.close()


def set_up(url):
    """DESCRIBE, then a TCP SETUP of every stream; the connection and the session."""
    s = connect(url, timeout=10)
    s.sendall(request("DESCRIBE", url, 1, ["Accept: application/sdp"]))
    session = None
    for i, control in enumerate(controls(url, read_reply(s))):
        headers = [f"Transport: RTP/AVP/TCP;unicast;interleaved={2 * i}-{2 * i + 1}"]
        s.sendall(request("SETUP", control, 2 + i, headers + (["Session: " + session] if session else [])))
        session = session or session_of(read_reply(s))
    if not session:
        sys.exit("no session: the SETUP was refused")
    return s, session


def describe(url):
    s, _ = set_up(url)  # kept: a connection closed here would take its session's media with it
    print("described", flush=True)
    signal.pause()


def interleaved(buf, on_packet, on_reply):
    """Hands over each whole interleaved frame's channel ($, channel, length) and each RTSP reply's head in `buf`;
    returns the incomplete rest."""
    while buf:
        if buf[:1] == b"$":
            if len(buf) < 4 or len(buf) < 4 + int.from_bytes(buf[2:4], "big"):
                break
            on_packet(buf[1])
            buf = buf[4 + int.from_bytes(buf[2:4], "big"):]
        elif b"\r\n\r\n" in buf:
            head, buf = buf.split(b"\r\n\r\n", 1)
            on_reply(head.decode("latin-1"))
        else:
            break
    return buf


def pause(url):
    s, session = set_up(url)
    s.settimeout(None)  # paused, nothing comes: wait for it as long as the test holds this viewer
    s.sendall(request("PLAY", url, 10, ["Session: " + session]))
    state = {"played": 0, "paused": False}

    def packet(channel):
        if channel == 0 and not state["paused"]:
            state["played"] += 1

    def reply(head):
        if "CSeq: 11" in head:
            state["paused"] = True
            print("paused", flush=True)

    def received():
        return s.recv(65536) or sys.exit("the server closed the connection")

    buf = b""
    while state["played"] < 30:
        buf = interleaved(buf + received(), packet, lambda head: None)
    print(f"played {state['played']}", flush=True)
    s.sendall(request("PAUSE", url, 11, ["Session: " + session]))
    while True:
        buf = interleaved(buf + received(), packet, reply)


def controls(url, sdp):
    out = []
    for line in sdp.split("\r\n"):
        if line.startswith("a=control:") and "stream=" in line:
            c = line.split(":", 1)[1]
            out.append(c if c.startswith("rtsp://") else url.rstrip("/") + "/" + c)
    return out


def together(url, seconds):
    viewers, udp = [], []
    for kind in ("udp", "tcp"):
        s = connect(url, timeout=5)
        s.sendall(request("DESCRIBE", url, 1, ["Accept: application/sdp"]))
        streams = controls(url, read_reply(s))
        session = None
        for i, target in enumerate(streams):
            if kind == "udp":
                rtp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                rtp.bind(("127.0.0.1", 0))
                rtcp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                rtcp.bind(("127.0.0.1", 0))
                udp.append((rtp, rtcp))
                transport = f"RTP/AVP;unicast;client_port={rtp.getsockname()[1]}-{rtcp.getsockname()[1]}"
            else:
                transport = f"RTP/AVP/TCP;unicast;interleaved={2 * i}-{2 * i + 1}"
            headers = ["Transport: " + transport] + (["Session: " + session] if session else [])
            s.sendall(request("SETUP", target, 2 + i, headers))
            session = session or session_of(read_reply(s))
        viewers.append((s, session, len(streams)))
    # Both PLAYs leave together.
    for s, session, n in viewers:
        s.sendall(request("PLAY", url, 10, ["Session: " + (session or "")]))
    counts = {"udp": [0] * viewers[0][2], "tcp": [0] * viewers[1][2]}

    def tcp_packet(channel):
        if channel % 2 == 0 and channel // 2 < len(counts["tcp"]):
            counts["tcp"][channel // 2] += 1

    tcp, buf = viewers[1][0], b""
    tcp.setblocking(False)
    rtp_sockets = {rtp: i for i, (rtp, _) in enumerate(udp)}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ready, _, _ = select.select(list(rtp_sockets) + [tcp], [], [], 0.2)
        for r in ready:
            if r is tcp:
                data = tcp.recv(65536)
                if not data:
                    end = 0
                # RTP packets counted per stream; RTCP and RTSP replies between them are skipped.
                buf = interleaved(buf + data, tcp_packet, lambda head: None)
            else:
                r.recv(65536)
                counts["udp"][rtp_sockets[r]] += 1
    print("udp " + " ".join(map(str, counts["udp"])) + " tcp " + " ".join(map(str, counts["tcp"])), flush=True)


if __name__ == "__main__":
    mode, url = sys.argv[1], sys.argv[2]
    if mode == "fuzz":
        args = sys.argv[3:]
        count = int(args[args.index("--count") + 1]) if "--count" in args else 1000
        seed = int(args[args.index("--seed") + 1]) if "--seed" in args else 1
        fuzz(url, count, seed)
    elif mode == "stall":
        stall(url)
    elif mode == "setup":
        setup(url, sys.argv[3])
    elif mode == "describe":
        describe(url)
    elif mode == "pause":
        pause(url)
    elif mode == "together":
        together(url, float(sys.argv[3]))
    else:
        sys.exit(f"unknown mode {mode}")
