#!/usr/bin/env bash
# Dropped frames over a long run: pipcompose serving RTSP to one viewer (ffmpeg over TCP, receiving without
# decoding, as a remote player would) while recording an MP4. Prints pipcompose's own counters at the end
# and the frames in the file.
# Usage: bash bench/drops.sh [WxH] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE="${1:-1280x720}"; SECS="${2:-600}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
swift build -c release --product pipcompose >/dev/null 2>&1
BIN="$(swift build -c release --show-bin-path)/pipcompose"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$BIN" run --size "$SIZE" --duration "$SECS" --rtsp "127.0.0.1:$PORT/pip" --record "$OUT/rec.mp4" --no-control \
    >"$OUT/run.log" 2>&1 &
PID=$!
# The viewer connects once the server answers.
for _ in $(seq 100); do
    grep -q "^serving" "$OUT/run.log" && break
    kill -0 $PID 2>/dev/null || { cat "$OUT/run.log"; exit 1; }
    python3 - "$PORT" <<'PY' && break || true
import socket, sys
s = socket.socket(); s.settimeout(0.1)
try: s.connect(("127.0.0.1", int(sys.argv[1]))); sys.exit(0)
except OSError: sys.exit(1)
PY
done
ffmpeg -v error -rtsp_transport tcp -i "rtsp://127.0.0.1:$PORT/pip" -c copy -f null - >"$OUT/viewer.log" 2>&1 &
VIEWER=$!
wait $PID
kill $VIEWER 2>/dev/null || true
echo "size $SIZE, $SECS s, one RTSP viewer, recording"
grep -E "^(stopped|rtsp|record)" "$OUT/run.log"
echo "frames in the recording: $(ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$OUT/rec.mp4")"
