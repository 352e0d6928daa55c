#!/usr/bin/env bash
# The whole benchmark suite, one command: render cost, live encoding against the encoder floor and peers,
# resize latency, glass-to-glass latency, a 10-minute 1080p60 run with a viewer, the most 640x360@30 streams with 0 drops, RTSP viewers on one
# 1280x720@30 stream, memory over a 30-minute soak, picture fidelity per client path over 10 minutes and a
# resize storm of 1000 resizes. Raw outputs go to bench/out/; bench/report.py then
# rewrites the suite section of docs/BENCHMARKS.md (tables with the command of each row).
# Takes about 90 minutes (30 of them the soak, 10 the fidelity run, 10 the 1080p60 run). Usage: bash bench/all.sh [SOAK_SECONDS]
# Run it on an otherwise idle machine: every figure is a CPU or timing measurement.
set -euo pipefail
cd "$(dirname "$0")/.."
SOAK="${1:-1800}"
OUT=bench/out
rm -rf "$OUT"; mkdir -p "$OUT"
bash scripts/setup.sh >/dev/null
swift build -c release >/dev/null 2>&1
BIN="$(swift build -c release --show-bin-path)/pipcompose"

step() { # name command...
    local name="$1"; shift
    echo "$*" >"$OUT/$name.cmd"
    echo "== $name: $* ($(date -u +%H:%M:%S))"
    "$@" >"$OUT/$name.txt" 2>"$OUT/$name.err" || echo "   $name failed: $(tail -3 "$OUT/$name.err")"
}

step render bash bench/render.sh 600
step live720 bash bench/live.sh 1280x720 30 20 3
step live1080 bash bench/live.sh 1920x1080 60 20 3
step resize python3 bench/resize_latency.py "$BIN" --count 50
step glass bash bench/glass.sh 30
step streams bash bench/streams.sh 30 16 24 32 40 48
step viewers bash bench/viewers.sh 500 1000
step soak bash bench/soak_rss.sh "$SOAK" "$OUT/soak"
step fidelity bash bench/fidelity.sh 600 640x360
step storm bash bench/storm.sh 1000 20 3840
step hd60 bash bench/hd60.sh 600
python3 bench/report.py "$OUT" docs/BENCHMARKS.md
echo "docs/BENCHMARKS.md updated; raw outputs in $OUT"
