#!/usr/bin/env python3
"""A TCP relay between RTSP viewers and a server, as a port-forward, NAT or proxy would sit there.

Listens on 127.0.0.1 (port 0 = the kernel picks), prints "listening PORT" once ready, and forwards each
connection to --target. --delay-ms holds every chunk that long in both directions (order kept).
--drop-every N damages the stream on purpose: every Nth RTP packet interleaved on channel 0 going to the
viewer is left out (RTSP over TCP frames them as '$', channel, 16-bit length, packet). Runs until killed.
"""
import argparse
import asyncio
import struct
import sys


class Dropper:
    """Parses the server-to-viewer byte stream (RTSP replies and '$' frames) and leaves out RTP packets."""

    def __init__(self, every):
        self.every = every
        self.buf = b""
        self.count = 0
        self.dropped = 0

    def feed(self, data):
        self.buf += data
        out = bytearray()
        while self.buf:
            if self.buf[0:1] == b"$":
                if len(self.buf) < 4:
                    break
                channel, length = self.buf[1], struct.unpack(">H", self.buf[2:4])[0]
                if len(self.buf) < 4 + length:
                    break
                frame, self.buf = self.buf[:4 + length], self.buf[4 + length:]
                if channel == 0:
                    self.count += 1
                    if self.count % self.every == 0:
                        self.dropped += 1
                        continue
                out += frame
            else:
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    break
                head = self.buf[:end + 4]
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1].strip() or 0)
                if len(self.buf) < end + 4 + length:
                    break
                out += self.buf[:end + 4 + length]
                self.buf = self.buf[end + 4 + length:]
        return bytes(out)


async def pump(reader, writer, delay, transform=None):
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue(maxsize=4096)

    async def send():
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - loop.time()
            if wait > 0:
                # The delay the relay adds on purpose (a packet is held until it is due), not synchronisation.
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.ensure_future(send())
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if transform:
                data = transform.feed(data)
            await queue.put((loop.time() + delay, data))
    except (ConnectionError, OSError):
        pass
    await queue.put((0, None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True, help="HOST:PORT of the RTSP server")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--delay-ms", type=float, default=0)
    ap.add_argument("--drop-every", type=int, default=0)
    args = ap.parse_args()
    host, port = args.target.rsplit(":", 1)
    delay = args.delay_ms / 1000

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            client_writer.close()
            return
        dropper = Dropper(args.drop_every) if args.drop_every > 0 else None
        await asyncio.gather(pump(client_reader, server_writer, delay),
                             pump(server_reader, client_writer, delay, dropper))

    server = await asyncio.start_server(handle, "127.0.0.1", args.port)
    print("listening", server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
