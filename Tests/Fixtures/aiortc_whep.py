#!/opt/pipcompose-test-venv/bin/python
"""A WHEP and WHIP server that is not pipcompose's: aiortc (a WebRTC stack in Python) relaying one live stream to
WHEP viewers, for the tests of `probe whep+http://` and `run --push whip+http://`. The stream is read from --rtsp URL
(pipcompose's own RTSP) and sent on as it came (H.264 passed through, not decoded: every viewer gets the encoder's own
pictures); without --rtsp, it is the one published to /whip (decoded by aiortc, encoded again for each viewer).

Paths (POST an SDP offer, get 201 with the answer and a Location to DELETE):
  /whep           straight to aiortc
  /whep/delayed   through a UDP relay of this process that holds every datagram going to the viewer --delay-ms
  /whep/lossy     through the relay, leaving out every --drop-every'th RTP packet going to the viewer
  /whep/deaf      an answer whose only candidate is a UDP port that reads and never answers: ICE cannot connect
  /whep/junk      201 with an HTML page instead of SDP
  /whip           a publisher (without --rtsp): its picture becomes the stream, encoded again for each viewer in
                  --codec (h264 or vp8); a second publisher replaces the first
A PATCH on a session (trickle ICE) gets 405, as from a server that takes none. Any request whose Authorization is not
"Bearer --token" (when given) gets 401.

Prints "listening PORT" once ready (127.0.0.1, --port, 0 by default: the kernel picks), "published N" when a
publisher's picture arrives, "viewer N gets video/H264" (or VP8) as it answers a viewer, and "ended N" when a session
is deleted (through /whep/delayed: "ended N held M ms (median of K datagrams, least L ms)", the delay the relay
really added, which a loaded machine makes longer than asked). Runs until killed.
"""
import argparse
import asyncio
import collections
import itertools
import re
import sys

from aiortc import MediaStreamTrack, RTCPeerConnection, RTCRtpSender, RTCSessionDescription
from aiortc.contrib.media import MediaPlayer
from aiortc.mediastreams import MediaStreamError
import aiortc_rsa  # noqa: F401  (GStreamer's RSA certificate: see there)


class Relay(asyncio.DatagramProtocol):
    """One viewer's UDP path: datagrams from the viewer go to aiortc's candidate; datagrams from aiortc go back to
    the viewer's last address, each held `delay` seconds, every `drop_every`'th RTP packet left out."""

    def __init__(self, target, delay, drop_every):
        self.target, self.delay, self.drop_every = target, delay, drop_every
        self.viewer = None
        self.rtp = 0
        self.dropped = 0
        # How long each RTP packet was really held (a loaded event loop holds it longer than asked), the last 10000.
        self.held = collections.deque(maxlen=10000)

    def connection_made(self, transport):
        self.front = transport

    def datagram_received(self, data, addr):
        self.viewer = addr
        self.back.sendto(data, self.target)

    def from_server(self, data):
        if self.viewer is None:
            return
        # RTP (and SRTP) packets: version 2, payload type not RTCP's 200-206 (RFC 5761).
        if len(data) > 12 and data[0] >> 6 == 2 and not 200 <= data[1] <= 206 and self.drop_every:
            self.rtp += 1
            if self.rtp % self.drop_every == 0:
                self.dropped += 1
                return
        if self.delay:
            loop = asyncio.get_running_loop()
            loop.call_later(self.delay, self.send_held, data, self.viewer, loop.time())
        else:
            self.front.sendto(data, self.viewer)

    def send_held(self, data, viewer, since):
        self.front.sendto(data, viewer)
        self.held.append(asyncio.get_running_loop().time() - since)

    def summary(self):
        if not self.held:
            return ""
        held = sorted(self.held)
        return (f" held {held[len(held) // 2] * 1000:.2f} ms (median of {len(held)} datagrams, "
                f"least {held[0] * 1000:.2f} ms)")


class Back(asyncio.DatagramProtocol):
    def __init__(self, relay):
        self.relay = relay

    def datagram_received(self, data, addr):
        self.relay.from_server(data)


class Deaf(asyncio.DatagramProtocol):
    def datagram_received(self, data, addr):
        pass


CANDIDATE = re.compile(r"^a=candidate:\S+ 1 udp \d+ (\d+\.\d+\.\d+\.\d+) (\d+) typ host.*$", re.M)


def only_candidate(sdp, address, port):
    """The answer with its candidates replaced by one host candidate at address:port."""
    lines = [l for l in sdp.splitlines() if not l.startswith("a=candidate:")]
    out = []
    for l in lines:
        out.append(l)
        if l.startswith("m="):
            out.append(f"a=candidate:1 1 udp 2130706431 {address} {port} typ host")
    return "\r\n".join(out) + "\r\n"


class Fanout:
    """One source read all along from the start (a source nobody reads would queue), each of its packets or frames
    handed to every viewer that reads: from its first read on (its connection is up), so it starts at the live edge
    rather than with a backlog sent in a burst. A viewer's queue holds at most `limit`: one that falls that far
    behind is ended and said so, never left to lose pictures unseen. (aiortc's MediaRelay either queues without a
    limit or keeps only the newest picture, which under load leaves frames out: what a test of the probe would take
    for loss.)"""

    def __init__(self, source, limit=300):
        self.source, self.limit = source, limit
        self.viewers = set()
        asyncio.ensure_future(self.run())

    def subscribe(self, from_key_frame):
        return Viewer(self, self.source.kind, from_key_frame)

    async def run(self):
        while True:
            try:
                item = await self.source.recv()
            except MediaStreamError:
                item = None
            for viewer in list(self.viewers):
                if viewer.queue.full():
                    print(f"error: a viewer fell {self.limit} pictures behind; its track ends", file=sys.stderr,
                          flush=True)
                    viewer.stop()
                else:
                    viewer.queue.put_nowait(item)
            if item is None:
                return


class Viewer(MediaStreamTrack):
    """A viewer's track of a Fanout. Passed through (`from_key_frame`), it starts at the next key frame, as a relay
    that cannot ask its source for one must: pictures before it would decode as garbage."""

    def __init__(self, fanout, kind, from_key_frame):
        super().__init__()
        self.kind = kind
        self.fanout = fanout
        self.queue = asyncio.Queue(maxsize=fanout.limit)
        self.started = not from_key_frame

    async def recv(self):
        if self.readyState == "live":
            self.fanout.viewers.add(self)
        while True:
            if self.readyState != "live":
                raise MediaStreamError
            item = await self.queue.get()
            if item is None:
                self.stop()
                raise MediaStreamError
            self.started = self.started or item.is_keyframe
            if self.started:
                return item

    def stop(self):
        super().stop()
        self.fanout.viewers.discard(self)
        # A recv() waiting on the queue wakes and sees the track ended.
        if not self.queue.full():
            self.queue.put_nowait(None)


class Server:
    def __init__(self, args):
        self.args = args
        self.source = None
        if args.rtsp:
            player = MediaPlayer(args.rtsp, options={"rtsp_transport": "tcp", "fflags": "nobuffer"}, decode=False)
            # A live source: packets go on as they arrive (aiortc paces anything that is not a capture device).
            player._throttle_playback = False
            self.source = Fanout(player.video)
        self.published = 0
        self.sessions = {}
        self.relays = {}
        self.numbers = itertools.count(1)

    async def answer(self, path, offer):
        pc = RTCPeerConnection()
        if path != "/whep":
            # aiortc must not learn the viewer's own candidates, or its checks would find the direct way past the
            # relay: it sees the viewer only as the relay (a peer-reflexive candidate), or, deaf, not at all.
            offer = "\r\n".join(l for l in offer.splitlines() if not l.startswith("a=candidate:")) + "\r\n"
        await pc.setRemoteDescription(RTCSessionDescription(sdp=offer, type="offer"))
        n = next(self.numbers)
        # Passed through, the stream stays H.264; encoded again (a WHIP publish), the viewers get --codec.
        mime = "video/H264" if self.args.rtsp or self.args.codec == "h264" else "video/VP8"
        chosen = [c for c in RTCRtpSender.getCapabilities("video").codecs if c.mimeType == mime]
        for t in pc.getTransceivers():
            if t.kind == "video":
                t.setCodecPreferences(chosen)
        pc.addTrack(self.source.subscribe(from_key_frame=bool(self.args.rtsp)))
        await pc.setLocalDescription(await pc.createAnswer())
        sdp = pc.localDescription.sdp
        loop = asyncio.get_running_loop()
        if path in ("/whep/delayed", "/whep/lossy"):
            found = CANDIDATE.search(sdp)
            target = (found.group(1), int(found.group(2)))
            relay = Relay(target, self.args.delay_ms / 1000 if path == "/whep/delayed" else 0,
                          self.args.drop_every if path == "/whep/lossy" else 0)
            # On aiortc's own address (this host's; aiortc does not gather on loopback, nor, then, does the viewer).
            await loop.create_datagram_endpoint(lambda: relay, local_addr=(target[0], 0))
            back, _ = await loop.create_datagram_endpoint(lambda: Back(relay), local_addr=(target[0], 0))
            relay.back = back
            sdp = only_candidate(sdp, target[0], relay.front.get_extra_info("sockname")[1])
            self.relays[n] = relay
        elif path == "/whep/deaf":
            address = CANDIDATE.search(sdp).group(1)
            deaf, _ = await loop.create_datagram_endpoint(Deaf, local_addr=(address, 0))
            sdp = only_candidate(sdp, address, deaf.get_extra_info("sockname")[1])
        self.sessions[n] = pc
        print(f"viewer {n} gets {mime}", flush=True)
        return n, sdp

    async def publish(self, offer):
        """A WHIP publisher: its video track becomes the stream."""
        pc = RTCPeerConnection()
        arrived = asyncio.get_running_loop().create_future()

        @pc.on("track")
        def on_track(track):
            if track.kind == "video" and not arrived.done():
                arrived.set_result(track)

        await pc.setRemoteDescription(RTCSessionDescription(sdp=offer, type="offer"))
        await pc.setLocalDescription(await pc.createAnswer())
        n = next(self.numbers)
        self.sessions[n] = pc

        async def adopt():
            self.source = Fanout(await arrived)
            self.published += 1
            print(f"published {n}", flush=True)

        asyncio.ensure_future(adopt())
        return n, pc.localDescription.sdp

    async def handle(self, reader, writer):
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l)}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            if self.args.token and headers.get("authorization") != "Bearer " + self.args.token:
                return self.reply(writer, 401, "text/plain", b"wrong token\n")
            if method == "POST" and path == "/whep/junk":
                return self.reply(writer, 201, "text/html", b"<html><body>not a WHEP server</body></html>\n")
            if method == "POST" and path == "/whip":
                n, sdp = await self.publish(body.decode())
                return self.reply(writer, 201, "application/sdp", sdp.encode(), {"Location": f"/session/{n}"})
            if method == "POST" and path.startswith("/whep") and self.source is None:
                return self.reply(writer, 503, "text/plain", b"nothing published yet\n")
            if method == "POST" and path.startswith("/whep"):
                n, sdp = await self.answer(path, body.decode())
                return self.reply(writer, 201, "application/sdp", sdp.encode(), {"Location": f"/session/{n}"})
            if method == "PATCH" and path.startswith("/session/"):
                # As a server without trickle ICE answers (aiortc gathers every candidate before it answers).
                return self.reply(writer, 405, "text/plain", b"no trickle ICE here\n")
            if method == "DELETE" and path.startswith("/session/"):
                n = int(path.rsplit("/", 1)[1])
                pc = self.sessions.pop(n, None)
                if pc is None:
                    return self.reply(writer, 404, "text/plain", b"no such session\n")
                await pc.close()
                relay = self.relays.pop(n, None)
                print(f"ended {n}" + (relay.summary() if relay else ""), flush=True)
                return self.reply(writer, 200, "text/plain", b"")
            return self.reply(writer, 404, "text/plain", b"not found\n")
        except Exception as e:  # a fixture: say what went wrong, to the client and on stderr
            print(f"error: {e!r}", file=sys.stderr, flush=True)
            self.reply(writer, 500, "text/plain", str(e).encode())

    def reply(self, writer, status, ctype, body, extra=None):
        head = [f"HTTP/1.1 {status} X", f"Content-Type: {ctype}", f"Content-Length: {len(body)}", "Connection: close"]
        head += [f"{k}: {v}" for k, v in (extra or {}).items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        writer.close()


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rtsp")
    p.add_argument("--port", type=int, default=0, help="0: the kernel picks")
    p.add_argument("--codec", choices=["h264", "vp8"], default="h264", help="what viewers of a WHIP publish get")
    p.add_argument("--token")
    p.add_argument("--delay-ms", type=float, default=0)
    p.add_argument("--drop-every", type=int, default=0)
    args = p.parse_args()
    server = Server(args)
    listening = await asyncio.start_server(server.handle, "127.0.0.1", args.port)
    print(f"listening {listening.sockets[0].getsockname()[1]}", flush=True)
    await asyncio.Event().wait()


asyncio.run(main())
