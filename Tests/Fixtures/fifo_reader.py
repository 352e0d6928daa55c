#!/usr/bin/env python3
"""The reader of a FIFO that pipcompose records into, which a test controls.

Opens the FIFO (the open waits for the writer), prints "open", then either:
  --copy FILE   reads until the writer closes it, keeping what it read in FILE; prints "eof BYTES";
  --hold        reads nothing, and leaves when a line "leave" comes on standard input (or standard input ends);
                with --pipe-size the pipe holds that little, so the writer's next write waits for this reader to
                read or to leave, and then fails with EPIPE; prints "left";
  --drain       with --hold: reads and throws away what comes until a line "hold" on standard input, then fills the
                pipe itself (so the writer's next write waits, however little it writes), prints "holding", and
                holds as above.
Exits 0.
"""
import argparse
import fcntl
import os
import select
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fifo")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--copy", metavar="FILE")
    mode.add_argument("--hold", action="store_true")
    parser.add_argument("--pipe-size", type=int, help="bytes the pipe holds (the kernel rounds up to a page)")
    parser.add_argument("--drain", action="store_true", help="with --hold: read until told 'hold', then fill the pipe")
    args = parser.parse_args()

    fd = os.open(args.fifo, os.O_RDONLY)
    if args.pipe_size:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, args.pipe_size)
    print("open", flush=True)
    if args.copy:
        total = 0
        with open(args.copy, "wb") as out:
            while chunk := os.read(fd, 65536):
                out.write(chunk)
                total += len(chunk)
        os.close(fd)
        print(f"eof {total}", flush=True)
        return
    filler = drain_until_hold(fd, args.fifo) if args.drain else None
    for line in sys.stdin:
        if line.strip() == "leave":
            break
    os.close(fd)
    if filler is not None:
        os.close(filler)
    print("left", flush=True)


def drain_until_hold(fd, path):
    """Reads `fd` until a line "hold" comes on standard input; then fills the pipe through a write end of its own and
    prints "holding". Returns that write end (closed when it leaves: the writer's wait then fails with EPIPE)."""
    while True:
        ready, _, _ = select.select([fd, sys.stdin], [], [])
        if sys.stdin in ready:
            line = sys.stdin.readline()
            if line == "" or line.strip() == "hold":
                break
        if fd in ready and not os.read(fd, 65536):
            break
    filler = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    while True:
        try:
            os.write(filler, b"\0")
        except BlockingIOError:
            break
    print("holding", flush=True)
    return filler


if __name__ == "__main__":
    main()
