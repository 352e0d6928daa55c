#!/usr/bin/python3
"""Checks an HLS ladder folder against RFC 8216 with Debian's m3u8 parser and the rules it does not check itself.

Usage: hls_check.py DIR WINDOW [ended]
Prints one JSON object: the variants (uri, bandwidth, average, resolution, codecs, frame rate, the peak and average
bit rates measured from the segment files) and the problems found ("problems": [] when none).
"""
import json
import math
import os
import sys

import m3u8


def main():
    folder, window = sys.argv[1], int(sys.argv[2])
    ended = len(sys.argv) > 3 and sys.argv[3] == "ended"
    problems = []
    master = m3u8.load(os.path.join(folder, "master.m3u8"))
    if not master.is_variant:
        problems.append("master.m3u8 is not a multivariant playlist")
    variants = []
    for p in master.playlists:
        info = p.stream_info
        v = {"uri": p.uri, "bandwidth": info.bandwidth, "average": info.average_bandwidth,
             "resolution": list(info.resolution) if info.resolution else None, "codecs": info.codecs,
             "frameRate": info.frame_rate}
        for key in ("bandwidth", "resolution", "codecs", "frameRate"):
            if not v[key]:
                problems.append(f"{p.uri}: no {key}")
        media_path = os.path.join(folder, p.uri)
        media = m3u8.load(media_path)
        base = os.path.dirname(media_path)
        if media.is_variant:
            problems.append(f"{p.uri}: is not a media playlist")
        if not media.segments:
            problems.append(f"{p.uri}: no segments")
        target = media.target_duration or 0
        rates, bits, seconds = [], 0, 0.0
        for s in media.segments:
            # RFC 8216 4.3.3.1: each EXTINF rounded to the nearest integer is at most the target duration.
            if round(s.duration) > target:
                problems.append(f"{p.uri}: {s.uri} lasts {s.duration} s, over the target duration {target}")
            path = os.path.join(base, s.uri)
            if not os.path.exists(path):
                problems.append(f"{p.uri}: {s.uri} is listed but missing")
                continue
            size = os.path.getsize(path) * 8
            if s.duration > 0:
                rates.append(size / s.duration)
            bits += size
            seconds += s.duration
        # Media sequence: the number of the first segment listed (hlssink2 numbers files from 0).
        if media.segments:
            first = media.segments[0].uri
            digits = "".join(c for c in first if c.isdigit())
            if digits and int(digits) != media.media_sequence:
                problems.append(f"{p.uri}: media sequence {media.media_sequence} but the first segment is {first}")
        if len(media.segments) > max(3, window):
            problems.append(f"{p.uri}: {len(media.segments)} segments listed, window {window}")
        on_disk = [f for f in os.listdir(base) if f.endswith(".ts")]
        if len(on_disk) > max(3, window) + 1:
            problems.append(f"{p.uri}: {len(on_disk)} segment files kept, window {window}")
        if ended and not media.is_endlist:
            problems.append(f"{p.uri}: no EXT-X-ENDLIST after the run ended")
        peak = max(rates) if rates else 0
        v["peak"] = peak
        v["measuredAverage"] = bits / seconds if seconds else 0
        # 4.3.4.2: BANDWIDTH is the peak segment bit rate; it must not be below any segment's.
        if info.bandwidth and peak > info.bandwidth * 1.0001:
            problems.append(f"{p.uri}: BANDWIDTH {info.bandwidth} below a segment's {peak:.0f} bit/s")
        if info.average_bandwidth and info.average_bandwidth > info.bandwidth:
            problems.append(f"{p.uri}: AVERAGE-BANDWIDTH above BANDWIDTH")
        v["segments"] = len(media.segments)
        v["targetDuration"] = target
        variants.append(v)
    print(json.dumps({"variants": variants, "problems": problems}))


main()
