#!/usr/bin/env python3
"""A light RTSP load generator: N viewers connect at the same moment, each doing OPTIONS, DESCRIBE,
SETUP (RTP over the RTSP TCP connection), PLAY, then waiting for its first RTP packet.

It decodes nothing, so one process holds hundreds of viewers. Prints one JSON line:
{"viewers": N, "served": S, "refused": R, "stalled": T, "first_packet_ms": {"p50":…, "p99":…, "max":…}}
served = got RTP data; refused = the server answered an error or closed; stalled = no data before --timeout.

Usage: rtsp_burst.py URL [--viewers N] [--timeout S] [--hold S]
"""
import argparse
import asyncio
import json
import time
from urllib.parse import urlparse


async def read_response(reader):
    # RTP may already flow on the connection before the PLAY answer: skip interleaved frames.
    while True:
        first = await reader.readexactly(1)
        if first != b"$":
            break
        hdr = await reader.readexactly(3)
        await reader.readexactly(int.from_bytes(hdr[1:3], "big"))
    head = first + await reader.readuntil(b"\r\n\r\n")
    text = head.decode("latin-1")
    status = int(text.split(" ", 2)[1])
    headers = {}
    for line in text.split("\r\n")[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    body = b""
    n = int(headers.get("content-length", "0"))
    if n:
        body = await reader.readexactly(n)
    return status, headers, body


async def viewer(url, timeout, hold, results):
    u = urlparse(url)
    start = time.monotonic()
    writer = None
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(u.hostname, u.port or 554), timeout)
        cseq = 0

        async def request(method, target, extra=""):
            nonlocal cseq
            cseq += 1
            writer.write(f"{method} {target} RTSP/1.0\r\nCSeq: {cseq}\r\n{extra}\r\n".encode())
            await writer.drain()
            return await asyncio.wait_for(read_response(reader), timeout)

        st, _, _ = await request("OPTIONS", url)
        if st != 200:
            results.append(("refused", st))
            return
        st, h, body = await request("DESCRIBE", url, "Accept: application/sdp\r\n")
        if st != 200:
            results.append(("refused", st))
            return
        control = None
        for line in body.decode("latin-1").splitlines():
            if line.startswith("a=control:") and "stream" in line:
                control = line.split(":", 1)[1].strip()
        base = h.get("content-base", url)
        if not base.endswith("/"):
            base += "/"
        track = control if control and control.startswith("rtsp://") else base + (control or "stream=0")
        st, h, _ = await request("SETUP", track, "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n")
        if st != 200:
            results.append(("refused", st))
            return
        session = h.get("session", "").split(";")[0]
        st, _, _ = await request("PLAY", url, f"Session: {session}\r\nRange: npt=0.000-\r\n")
        if st != 200:
            results.append(("refused", st))
            return
        # The first interleaved RTP frame: '$', channel, 2-byte length.
        while True:
            b = await asyncio.wait_for(reader.readexactly(1), timeout)
            if b == b"$":
                hdr = await asyncio.wait_for(reader.readexactly(3), timeout)
                await reader.readexactly(int.from_bytes(hdr[1:3], "big"))
                results.append(("served", (time.monotonic() - start) * 1000))
                break
        if hold > 0:
            end = time.monotonic() + hold
            while time.monotonic() < end:
                await asyncio.wait_for(reader.read(65536), timeout)
    except asyncio.TimeoutError:
        results.append(("stalled", None))
    except (ConnectionError, asyncio.IncompleteReadError, OSError) as e:
        results.append(("refused", str(e)))
    finally:
        if writer:
            writer.close()


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--viewers", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--hold", type=float, default=0, help="seconds each viewer keeps reading after its first packet")
    a = ap.parse_args()
    results = []
    await asyncio.gather(*(viewer(a.url, a.timeout, a.hold, results) for _ in range(a.viewers)))
    served = sorted(r[1] for r in results if r[0] == "served")
    pct = lambda p: round(served[min(len(served) - 1, int(p * (len(served) - 1)))], 1) if served else None
    print(json.dumps({
        "viewers": a.viewers,
        "served": len(served),
        "refused": sum(1 for r in results if r[0] == "refused"),
        "stalled": sum(1 for r in results if r[0] == "stalled"),
        "first_packet_ms": {"p50": pct(0.5), "p99": pct(0.99), "max": served[-1] if served else None},
    }))


if __name__ == "__main__":
    asyncio.run(main())
