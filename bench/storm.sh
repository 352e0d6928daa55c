#!/usr/bin/env bash
# A resize storm: COUNT resizes through the control API at RATE a second over random sizes (tiny, odd,
# portrait, 4K, repeats, back to the file's size), RTSP viewers joining and leaving every 5 s, on two instances:
# one recording a `fit` MP4 and a `.ts` (which follows), one a `split` MKV.
#
#   bash bench/storm.sh [COUNT] [RATE] [MAX_SIDE]      (defaults: 1000, 20, 3840)
#
# Prints what each output holds against the frames drawn, the viewers' outcome and the control API's slowest
# answer.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
COUNT=${1:-1000}
RATE=${2:-20}
MAX_SIDE=${3:-3840}
SCENE=examples/info-panel.yaml
release_binary
WORK=$(mktemp -d)
P1="" P2=""
trap 'kill -INT $P1 $P2 2>/dev/null || true; rm -rf "$WORK"' EXIT
frames() { ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1" | head -1; }
wait_for() { for _ in $(seq 1 300); do grep -q "$2" "$1" && return 0; sleep 0.1; done; echo "no '$2' in $1" >&2; exit 1; }

R1=$(free_port); C1=$(free_port); C2=$(free_port)
"$BIN" run "$SCENE" --size 640x360 --rtsp "127.0.0.1:$R1/pip" --control "127.0.0.1:$C1" \
    --record "$WORK/fit.mp4" --record "$WORK/follow.ts" >"$WORK/a.log" 2>&1 & P1=$!
"$BIN" run "$SCENE" --size 640x360 --control "127.0.0.1:$C2" \
    --record "$WORK/split.mkv" --record-resize split >"$WORK/b.log" 2>&1 & P2=$!
wait_for "$WORK/a.log" "fps;"; wait_for "$WORK/b.log" "fps;"
python3 Tests/Fixtures/resize_storm.py "http://127.0.0.1:$C2" --count "$COUNT" --rate "$RATE" --max-side "$MAX_SIDE" \
    --seed 2 >"$WORK/b.json" &
STORM2=$!
python3 Tests/Fixtures/resize_storm.py "http://127.0.0.1:$C1" --count "$COUNT" --rate "$RATE" --max-side "$MAX_SIDE" \
    --viewers "rtsp://127.0.0.1:$R1/pip" >"$WORK/a.json"
wait $STORM2
kill -INT $P1 $P2; wait $P1 || true; wait $P2 || true; P1="" P2=""

drawn() { grep "stopped after" "$1" | sed -E 's/.*rendered ([0-9]+), repeated ([0-9]+).*/\1 \2/' | awk '{print $1+$2}'; }
echo "resize storm: $COUNT resizes at $RATE/s, sizes up to $MAX_SIDE px ($(date -u +%Y-%m-%dT%H:%MZ))"
echo "instance A (fit MP4, follow TS, RTSP viewers): $(cat "$WORK/a.json")"
echo "  $(grep "stopped after" "$WORK/a.log")"
echo "  drawn $(drawn "$WORK/a.log"); fit.mp4 decodes $(frames "$WORK/fit.mp4") frames, sizes: $(ffprobe -v error -select_streams v:0 -show_entries frame=width,height -of csv=p=0 "$WORK/fit.mp4" | sed "s/,$//" | sort -u | tr '\n' ' ')"
echo "  follow.ts decodes $(frames "$WORK/follow.ts") frames in $(ffprobe -v error -select_streams v:0 -show_entries frame=width,height -of csv=p=0 "$WORK/follow.ts" | sed "s/,$//" | sort -u | wc -l) sizes"
total=0; parts=0
for f in "$WORK"/split*.mkv; do total=$((total + $(frames "$f"))); parts=$((parts + 1)); done
echo "instance B (split MKV): $(cat "$WORK/b.json")"
echo "  $(grep "stopped after" "$WORK/b.log")"
echo "  drawn $(drawn "$WORK/b.log"); $parts parts decode $total frames"
grep -iE "error|lost at encoder" "$WORK/a.log" "$WORK/b.log" || echo "  no errors logged"
