#!/usr/bin/env bash
# Resident memory of a `run` (the demo at 1280x720, a 416x234 rendition, an HLS ladder, a recording split at every
# resize) across N resize cycles (1280x720 → 1024x576 → 1280x720, HOLD seconds at each, default 3): the hour with
# everything on grew about 8 MiB at the first such cycle (issue 52). Prints, after each cycle, the resident MiB and
# the MiB glibc's heaps give out (large mapped blocks apart; the run's /metrics). SCENE=FILE: that scene instead of
# the demo (the hour's: `python3 -c "import sys; sys.path.insert(0, 'bench'); import everything;
# print(everything.scene('DIR'))"`); VIEWERS=K: K ffmpeg viewers over RTSP (TCP) all along, so every frame is drawn.
# Usage: bash bench/cycle_memory.sh [N] [BIN] [extra run args…]   (env PIPCOMPOSE_MEMORY_TRIM is passed on)
set -uo pipefail
cd "$(dirname "$0")/.."
N=${1:-20}; BIN=${2:-.build/release/pipcompose}; shift $(( $# < 2 ? $# : 2 ))
D=$(mktemp -d)
C=$(python3 -c "import socket;s=socket.socket();s.bind(('127.0.0.1',0));print(s.getsockname()[1])")
P=$(python3 -c "import socket;s=socket.socket();s.bind(('127.0.0.1',0));print(s.getsockname()[1])")
T=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
$BIN run ${SCENE:-} --size 1280x720 --rtsp 127.0.0.1:$P/pip --rendition 416x234 --hls $D/ladder --record $D/rec.mp4 --record-resize split \
    --control 127.0.0.1:$C --control-token $T "$@" > $D/run.log 2>&1 &
RUN=$!
for i in $(seq 100); do grep -q "^control http" $D/run.log && break; sleep 0.2; done
VIEWING=()
for v in $(seq ${VIEWERS:-0}); do
  ffmpeg -nostdin -v error -rtsp_transport tcp -i rtsp://127.0.0.1:$P/pip -f null - > $D/viewer$v.log 2>&1 &
  VIEWING+=($!)
done
rss() { awk '/VmRSS/{print $2/1024}' /proc/$RUN/status; }
heap() {
  curl -s -H "Authorization: Bearer $T" http://127.0.0.1:$C/metrics \
    | awk '/^pipcompose_process_heap_allocated_bytes/{a=$2} /^pipcompose_process_heap_mapped_bytes/{m=$2} END{printf "%.2f", (a-m)/1048576}'
}
resize() { curl -s -o /dev/null -H "Authorization: Bearer $T" -H "Content-Type: application/json" -X POST -d "{\"size\":\"$1\"}" http://127.0.0.1:$C/v1/resize; }
sleep 5
echo "cycle resident_MiB heap_blocks_MiB"
echo "start $(rss) $(heap)"
for i in $(seq $N); do
  resize 1024x576; sleep ${HOLD:-3}
  resize 1280x720; sleep ${HOLD:-3}
  echo "$i $(rss) $(heap)"
done
for v in "${VIEWING[@]}"; do kill -INT $v; wait $v; done
kill -INT $RUN; wait $RUN
rm -rf "$D"
