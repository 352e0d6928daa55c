#!/usr/bin/env bash
# What a sound track costs, and where its ticks land: pipcompose recording the timecode scene with and without
# `--audio ticks`, alternating, and the peer floor for the sound alone (gst-launch: 48 kHz stereo generated
# live and encoded by the same avenc_aac at the same bitrate). Then the A/V offset of each recording made
# with sound, read back by `pipcompose probe`.
# Usage: bash bench/audio.sh [WxH] [FPS] [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE="${1:-1280x720}"; FPS="${2:-30}"; SECS="${3:-20}"; ROUNDS="${4:-3}"
WARM=5
FRAMES=$((SECS * FPS))
RUN=$((WARM + SECS + 3))
TICK=$(getconf CLK_TCK)
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source bench/lib.sh
release_binary

for round in $(seq 1 "$ROUNDS"); do
    echo "round $round"
    steady pipcompose-silent "$BIN" run examples/timecode.yaml --no-control --size "$SIZE" --fps "$FPS" --duration "$RUN" --record "$OUT/silent.mp4"
    steady pipcompose-ticks "$BIN" run examples/timecode.yaml --no-control --size "$SIZE" --fps "$FPS" --duration "$RUN" --audio ticks \
        --record "$OUT/ticks$round.mp4"
    steady gst-aac gst-launch-1.0 -q audiotestsrc is-live=true wave=ticks samplesperbuffer=1600 \
        ! audio/x-raw,format=S16LE,rate=48000,channels=2 ! audioconvert ! avenc_aac bitrate=128000 ! aacparse ! fakesink
done | tee "$OUT/results"
echo
echo "$SIZE@$FPS, window ${SECS} s ($FRAMES frames) after ${WARM} s, $ROUNDS rounds"
awk '$1 ~ /-threads$/ { next } NF == 2 { sum[$1] += $2; n[$1]++ }
     END { s = sum["pipcompose-silent"] / n["pipcompose-silent"]; t = sum["pipcompose-ticks"] / n["pipcompose-ticks"]
           g = sum["gst-aac"] / n["gst-aac"]
           printf "mean cpu s: silent %.2f, with ticks %.2f (x%.3f); the sound adds %.2f s, the peer AAC floor %.2f s\n",
                  s, t, t / s, t - s, g }' "$OUT/results"
for f in "$OUT"/ticks*.mp4; do
    echo "A/V offset of $(basename "$f"):"
    "$BIN" probe --av "$f" | grep -E "A/V offset|sound:"
done
