#!/usr/bin/env bash
# Resident memory of a `run` (the demo at 1280x720, a 416x234 rendition, an HLS ladder, a recording split at every
# resize) across N resize cycles (1280x720 → 1024x576 → 1280x720, 3 s at each): the hour with everything on grew
# about 8 MiB at the first such cycle (issue 52). Prints the resident MiB after each cycle.
# Usage: bash bench/cycle_memory.sh [N] [BIN] [extra run args…]   (env PIPCOMPOSE_MEMORY_TRIM is passed on)
set -uo pipefail
cd "$(dirname "$0")/.."
N=${1:-20}; BIN=${2:-.build/release/pipcompose}; shift $(( $# < 2 ? $# : 2 ))
D=$(mktemp -d)
C=$(python3 -c "import socket;s=socket.socket();s.bind(('127.0.0.1',0));print(s.getsockname()[1])")
T=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
$BIN run --size 1280x720 --rtsp 127.0.0.1:0/pip --rendition 416x234 --hls $D/ladder --record $D/rec.mp4 --record-resize split \
    --control 127.0.0.1:$C --control-token $T "$@" > $D/run.log 2>&1 &
RUN=$!
for i in $(seq 100); do grep -q "^control http" $D/run.log && break; sleep 0.2; done
rss() { awk '/VmRSS/{print $2/1024}' /proc/$RUN/status; }
resize() { curl -s -o /dev/null -H "Authorization: Bearer $T" -H "Content-Type: application/json" -X POST -d "{\"size\":\"$1\"}" http://127.0.0.1:$C/v1/resize; }
sleep 5
echo "start $(rss)"
for i in $(seq $N); do
  resize 1024x576; sleep 3
  resize 1280x720; sleep 3
  echo "$i $(rss)"
done
kill -INT $RUN; wait $RUN
rm -rf "$D"
