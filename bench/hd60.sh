#!/usr/bin/env bash
# A long run at 1920x1080@60: the timecode scene served over RTSP and recorded, with a viewer on the same machine
# probing it over TCP (jitter buffer 0), for SECONDS. Reports pipcompose's own counters (frames rendered, late,
# dropped at the encoder), the viewer's frames, drops, repeats and render → decoded latency, and the frames in the
# recording.
# Usage: bash bench/hd60.sh [SECONDS]   — prints the counters, then one JSON line.
# ENCODER_THREADS=N in the environment runs x264 with N threads (pipcompose's --encoder-threads).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-600}"
OUT="$(mktemp -d)"
trap 'stop_source; rm -rf "$OUT"' EXIT
release_binary
PORT=$(free_port)
start_source "$OUT/source.log" examples/timecode.yaml --size 1920x1080 --fps 60 --rtsp "127.0.0.1:$PORT/pip" \
    --record "$OUT/rec.mp4" --duration $((SECS + 20)) ${ENCODER_THREADS:+--encoder-threads "$ENCODER_THREADS"}
"$BIN" probe "rtsp://127.0.0.1:$PORT/pip" --transport tcp --duration "$SECS" --quiet --report "$OUT/probe.json" \
    >/dev/null || true
stop_source
grep -E "^(stopped|rtsp|record)" "$OUT/source.log" || true
FRAMES=$(ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$OUT/rec.mp4")
python3 - "$OUT" "$SECS" "$FRAMES" <<'PY'
import json, re, sys
out, secs, frames = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tot = json.load(open(f"{out}/probe.json"))["total"]
log = open(f"{out}/source.log").read()
m = re.search(r"^stopped after (\d+) frames: rendered (\d+), repeated (\d+), encoded (\d+), dropped (\d+) \(late (\d+), at the encoder (\d+)\)", log, re.M)
src = dict(zip(["frames", "rendered", "repeated", "encoded", "dropped", "late", "droppedAtEncoder"], map(int, m.groups()))) if m else None
print(json.dumps({"bench": "hd60", "size": "1920x1080", "fps": 60, "seconds": secs, "source": src,
                  "recordedFrames": frames,
                  "viewer": {k: tot.get(k) for k in ("frames", "dropped", "repeated", "unreadable", "freezes", "latencyMs")}}))
PY
