#!/usr/bin/env bash
# glibc's blocks in the heaps and resident memory of a `run` (the demo at 1280x720, one ffmpeg viewer over RTSP so
# every frame is drawn) while its picture visits sizes of its own, 3 s each: 24 widths (640 up to 1376) for each shape
# (default 16:9: 640x360 … 1376x774), then the same sizes again. What each new size leaves, and whether a size visited
# before leaves more (issue 52). Prints the resident MiB and the MiB glibc's heaps give out (large mapped blocks
# apart; the run's /metrics) after every 8th resize.
# Usage: bash bench/sizes_memory.sh [BIN] [SHAPE…]   (SHAPE: W:H, e.g. 16:9 4:3 16:10)
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
BIN=${1:-.build/release/pipcompose}; shift $(( $# < 1 ? $# : 1 ))
SHAPES=("${@:-16:9}")
D=$(mktemp -d)
C=$(free_port); P=$(free_port)
T=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
$BIN run --size 1280x720 --rtsp 127.0.0.1:$P/pip --control 127.0.0.1:$C --control-token $T > $D/run.log 2>&1 &
RUN=$!
wait_for_line $D/run.log "^control http" $RUN "pipcompose run did not start" || exit 1
ffmpeg -nostdin -v error -rtsp_transport tcp -i rtsp://127.0.0.1:$P/pip -f null - > $D/viewer.log 2>&1 & V=$!
rss() { awk '/VmRSS/{print $2/1024}' /proc/$RUN/status; }
heap() { curl -s -H "Authorization: Bearer $T" http://127.0.0.1:$C/metrics | awk '/^pipcompose_process_heap_allocated_bytes/{a=$2} /^pipcompose_process_heap_mapped_bytes/{m=$2} END{printf "%.2f", (a-m)/1048576}'; }
resize() { curl -s -o /dev/null -H "Authorization: Bearer $T" -H "Content-Type: application/json" -X POST -d "{\"size\":\"$1\"}" http://127.0.0.1:$C/v1/resize; }
sleep 10
echo "resized resident_MiB heap_blocks_MiB"
echo "0 $(rss) $(heap)"
n=0
for pass in 1 2; do
  for shape in "${SHAPES[@]}"; do
    for w in $(seq 640 32 1376); do
      h=$(( (w * ${shape#*:} / ${shape%:*}) / 2 * 2 ))
      resize ${w}x$h; sleep 3; n=$((n+1))
      (( n % 8 == 0 )) && echo "$n $(rss) $(heap)"
    done
  done
done
kill -INT $V; wait $V
kill -INT $RUN; wait $RUN
rm -rf "$D"
