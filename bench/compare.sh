#!/usr/bin/env bash
# Two builds of pipcompose on the same work, alternating: the demo scene recorded at steady state, CPU over a
# window after a warm-up, total and per thread (encoder, frame loop, other). For checking that a change did not
# cost anything: build the other commit in a worktree (`git worktree add /tmp/old COMMIT`, then
# `swift build -c release` there) and compare its binary with this tree's.
# Usage: bash bench/compare.sh BIN_A BIN_B [WxH] [FPS] [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
A="$1"; B="$2"
SIZE="${3:-1280x720}"; FPS="${4:-30}"; SECS="${5:-20}"; ROUNDS="${6:-3}"
WARM=5
FRAMES=$((SECS * FPS))
RUN=$((WARM + SECS + 3))
TICK=$(getconf CLK_TCK)
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source bench/lib.sh

for round in $(seq 1 "$ROUNDS"); do
    echo "round $round"
    steady pipcompose-a "$A" run --no-control --size "$SIZE" --fps "$FPS" --duration "$RUN" --record "$OUT/a.mp4"
    steady pipcompose-b "$B" run --no-control --size "$SIZE" --fps "$FPS" --duration "$RUN" --record "$OUT/b.mp4"
done | tee "$OUT/results"
echo
echo "$SIZE@$FPS, window ${SECS} s ($FRAMES frames) after ${WARM} s, $ROUNDS rounds; A = $A, B = $B"
awk '$1 ~ /-threads$/ { next } /^pipcompose-/ { sum[$1] += $2; n[$1]++ }
     END { a = sum["pipcompose-a"] / n["pipcompose-a"]; b = sum["pipcompose-b"] / n["pipcompose-b"]
           printf "mean cpu s: A %.2f, B %.2f; B/A %.3f\n", a, b, b / a }' "$OUT/results"
