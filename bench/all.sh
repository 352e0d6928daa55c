#!/usr/bin/env bash
# The whole benchmark suite, one command: render cost, live encoding against the encoder floor and peers, resize
# latency, glass-to-glass latency, the most 640x360@30 streams with 0 drops (up to 64, what `soak` takes), RTSP viewers
# on one 1280x720@30 stream, memory over a 30-minute soak, picture fidelity per client path over 10 minutes, a resize
# storm of 1000 resizes and a 10-minute 1080p60 run with a viewer.
# Raw outputs go to bench/out/ (per step NAME.txt, NAME.err, NAME.cmd and NAME.date, and the commit measured);
# bench/report.py then rewrites the suite's rows of docs/BENCHMARKS.md, each with its date, the commit and its command
# (a step that failed keeps its earlier row), and puts this run's full tables at the top of docs/BENCHMARKS-LOG.md.
# Figures the suite does not measure (bench/overhead.sh, which needs perf; WebRTC, sound, video layers) are rows of
# BENCHMARKS.md kept by hand, from the commands they name.
# Takes about 90 minutes (30 of them the soak, 10 the fidelity run, 10 the 1080p60 run).
# Usage: bash bench/all.sh [SOAK_SECONDS]
# Run it on an otherwise idle machine: every figure is a CPU or timing measurement.
set -euo pipefail
cd "$(dirname "$0")/.."
SOAK="${1:-1800}"
OUT=bench/out
rm -rf "$OUT"; mkdir -p "$OUT"
bash scripts/setup.sh test >/dev/null
# The commit measured, marked when the checkout has changes of its own (they are measured too).
COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then COMMIT="$COMMIT+changes"; fi
echo "$COMMIT" >"$OUT/commit"
swift build -c release >/dev/null 2>&1
BIN="$(swift build -c release --show-bin-path)/pipcompose"

step() { # name command...
    local name="$1"; shift
    echo "$*" >"$OUT/$name.cmd"
    date -u +"%Y-%m-%d %H:%M UTC" >"$OUT/$name.date"
    echo "== $name: $* ($(date -u +%H:%M:%S))"
    "$@" >"$OUT/$name.txt" 2>"$OUT/$name.err" || echo "   $name failed: $(tail -3 "$OUT/$name.err")"
}

step render bash bench/render.sh 600
step live720 bash bench/live.sh 1280x720 30 20 3
step live1080 bash bench/live.sh 1920x1080 60 20 3
step resize python3 bench/resize_latency.py "$BIN" --count 50
step glass bash bench/glass.sh 30
step streams bash bench/streams.sh 30 40 48 56 64
step viewers bash bench/viewers.sh 500 1000
step soak bash bench/soak_rss.sh "$SOAK" "$OUT/soak"
step fidelity bash bench/fidelity.sh 600 640x360
step storm bash bench/storm.sh 1000 20 3840
step hd60 bash bench/hd60.sh 600
python3 bench/report.py "$OUT" docs/BENCHMARKS.md docs/BENCHMARKS-LOG.md
echo "docs/BENCHMARKS.md and docs/BENCHMARKS-LOG.md updated; raw outputs in $OUT"
