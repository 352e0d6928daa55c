#!/usr/bin/env python3
"""The reader of a FIFO that pipcompose records into, which a test controls.

Opens the FIFO (the open waits for the writer), prints "open", then either:
  --copy FILE   reads until the writer closes it, keeping what it read in FILE; prints "eof BYTES";
  --hold        reads nothing, and leaves when a line "leave" comes on standard input (or standard input ends);
                with --pipe-size the pipe holds that little, so the writer's next write waits for this reader to
                read or to leave, and then fails with EPIPE; prints "left".
Exits 0.
"""
import argparse
import fcntl
import os
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fifo")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--copy", metavar="FILE")
    mode.add_argument("--hold", action="store_true")
    parser.add_argument("--pipe-size", type=int, help="bytes the pipe holds (the kernel rounds up to a page)")
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
    for line in sys.stdin:
        if line.strip() == "leave":
            break
    os.close(fd)
    print("left", flush=True)


if __name__ == "__main__":
    main()
