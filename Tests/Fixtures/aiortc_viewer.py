#!/opt/pipcompose-test-venv/bin/python
"""A WHEP viewer that is not pipcompose's: aiortc (a WebRTC stack in Python) posts its own offer to a WHEP server,
decodes the picture with its own decoder, and writes every picture it decoded, losslessly (FFV1 in Matroska), to OUT:
what this viewer saw, for `pipcompose probe OUT --reference SCENE` to check frame by frame.

Usage: aiortc_viewer.py URL SECONDS OUT [--token T]   — prints one JSON line: frames, width, height, codec, error.
"""
import argparse
import asyncio
import fractions
import json
import urllib.error
import urllib.request

import av
from aiortc import RTCPeerConnection, RTCSessionDescription
import aiortc_rsa  # noqa: F401  (GStreamer's RSA certificate: see there)


def post(url, body, token, method="POST"):
    headers = {"Content-Type": "application/sdp"}
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=15) as r:
        return r.read().decode(), r.headers.get("Location")


async def watch(args):
    pc = RTCPeerConnection()
    pc.addTransceiver("video", direction="recvonly")
    track_ready = asyncio.get_running_loop().create_future()

    @pc.on("track")
    def on_track(track):
        if track.kind == "video" and not track_ready.done():
            track_ready.set_result(track)

    await pc.setLocalDescription(await pc.createOffer())
    loop = asyncio.get_running_loop()
    answer, location = await loop.run_in_executor(None, post, args.url, pc.localDescription.sdp.encode(), args.token)
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
    codec = next((l.split()[1] for l in answer.splitlines() if l.startswith("a=rtpmap:")), None)
    track = await asyncio.wait_for(track_ready, 15)
    out = av.open(args.out, "w", format="matroska")
    stream = None
    frames = 0
    end = loop.time() + args.seconds
    try:
        while loop.time() < end:
            frame = await asyncio.wait_for(track.recv(), 5)
            if stream is None:
                stream = out.add_stream("ffv1", rate=30)
                stream.width, stream.height, stream.pix_fmt = frame.width, frame.height, "yuv420p"
            picture = frame.reformat(format="yuv420p")
            picture.pts = frames
            picture.time_base = fractions.Fraction(1, 30)
            for packet in stream.encode(picture):
                out.mux(packet)
            frames += 1
    finally:
        if stream is not None:
            for packet in stream.encode(None):
                out.mux(packet)
        out.close()
        if location:
            await loop.run_in_executor(None, post, urllib.parse.urljoin(args.url, location), None, args.token, "DELETE")
        await pc.close()
    return {"frames": frames, "width": stream.width if stream else None, "height": stream.height if stream else None,
            "codec": codec}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("seconds", type=float)
    p.add_argument("out")
    p.add_argument("--token")
    args = p.parse_args()
    try:
        result = asyncio.run(watch(args))
    except Exception as e:  # a fixture: the test reads what went wrong
        result = {"error": repr(e)}
    print(json.dumps(result), flush=True)


main()
