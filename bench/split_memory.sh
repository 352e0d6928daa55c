#!/usr/bin/env bash
# What a run keeps of the parts of a recording split at every resize: N resizes (320x180 ↔ 352x198, one every
# PACE seconds, default 0.1), each starting a part. Every EVERY parts (default 200) prints the resident MiB, the MiB
# glibc's heaps give out (large mapped blocks apart; the run's /metrics), the bytes of `GET /v1/status`, and the
# `pipcompose_output_frames_total` series in /metrics; at the end, how long Ctrl-C took to finish the run, and the
# parts on disk. Before the fold into earlier outputs (issue 52) each part stayed listed, with four series and a
# thread to finish it at the end.
# Usage: bash bench/split_memory.sh [N] [BIN]
set -uo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}; BIN=${2:-.build/release/pipcompose}; EVERY=${EVERY:-200}
D=$(mktemp -d)
C=$(python3 -c "import socket;s=socket.socket();s.bind(('127.0.0.1',0));print(s.getsockname()[1])")
T=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
$BIN run --size 320x180 --record $D/part.mkv --record-resize split --control 127.0.0.1:$C --control-token $T \
    > $D/run.log 2>&1 &
RUN=$!
for i in $(seq 100); do grep -q "^control http" $D/run.log && break; sleep 0.2; done
get() { curl -s -H "Authorization: Bearer $T" http://127.0.0.1:$C$1; }
rss() { awk '/VmRSS/{print $2/1024}' /proc/$RUN/status; }
heap() {
  get /metrics | awk '/^pipcompose_process_heap_allocated_bytes/{a=$2} /^pipcompose_process_heap_mapped_bytes/{m=$2} END{printf "%.2f", (a-m)/1048576}'
}
series() { get /metrics | grep -c '^pipcompose_output_frames_total{'; }
resize() { curl -s -o /dev/null -H "Authorization: Bearer $T" -H "Content-Type: application/json" -X POST -d "{\"size\":\"$1\"}" http://127.0.0.1:$C/v1/resize; }
sleep 2
echo "parts resident_MiB heap_blocks_MiB status_bytes output_series"
echo "0 $(rss) $(heap) $(get /v1/status | wc -c) $(series)"
for i in $(seq $N); do
  if (( i % 2 )); then resize 352x198; else resize 320x180; fi
  sleep ${PACE:-0.1}
  if (( i % EVERY == 0 )); then echo "$i $(rss) $(heap) $(get /v1/status | wc -c) $(series)"; fi
done
START=$(date +%s.%N)
kill -INT $RUN; wait $RUN
echo "exit $? after $(python3 -c "print(round($(date +%s.%N) - $START, 2))") s; $(ls $D | grep -c '^part') parts on disk"
grep -E "earlier outputs|^stopped after" $D/run.log
rm -rf $D
