#!/usr/bin/env bash
# The most 640x360@30 streams one pipcompose process keeps with 0 dropped frames: `pipcompose soak` with
# N streams (render + x264, one thread each, RTSP served) for SECONDS, N rising until frames drop. Peer, same
# run: at the largest clean N, one gst-launch with N branches videotestsrc → x264enc (same settings) → fakesink,
# its CPU beside pipcompose's.
# Usage: bash bench/streams.sh [SECONDS] [N...]   — prints one JSON line per N, then the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-30}"; shift || true
COUNTS=("${@:-16 24 32 40 48}")
read -r -a COUNTS <<<"${COUNTS[*]}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
release_binary
BEST=0; BEST_CPU=0
for N in "${COUNTS[@]}"; do
    "$BIN" soak --streams "$N" --viewers 0 --size 640x360 --fps 30 --duration "$SECS" --report "$OUT/s$N" \
        >"$OUT/s$N.log" 2>&1 || true
    LINE=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["totals"]
print(json.dumps({"bench":"streams","streams":int(sys.argv[2]),"frames":t["framesRendered"],"dropped":t["sourceDropped"],"late":t.get("sourceLate"),"atEncoder":t.get("sourceEncoderDropped"),"cpuPercent":round(t["cpuPercentMean"],1),"rssMiB":round(t["rssMaxBytes"]/1048576,1)}))' "$OUT/s$N/soak.json" "$N")
    echo "$LINE"
    DROPPED=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["dropped"])' "$LINE")
    if [ "$DROPPED" != 0 ]; then break; fi
    BEST=$N; BEST_CPU=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["cpuPercent"])' "$LINE")
done
PEER_CPU=null
if [ "$BEST" -gt 0 ]; then
    BR=$(( 640 * 360 * 30 * 9 / 100 / 1000 ))
    ARGS=()
    for _ in $(seq 1 "$BEST"); do
        ARGS+=(videotestsrc is-live=true pattern=ball num-buffers=$((SECS * 30)) ! "video/x-raw,format=I420,width=640,height=360,framerate=30/1"
               ! x264enc tune=zerolatency speed-preset=ultrafast bitrate=$BR key-int-max=30 threads=1 ! fakesink sync=false)
    done
    /usr/bin/time -f "%U %S %e" -o "$OUT/peer.time" gst-launch-1.0 -q "${ARGS[@]}" >/dev/null 2>&1
    PEER_CPU=$(awk '{ printf "%.1f", ($1 + $2) / $3 * 100 }' "$OUT/peer.time")
fi
echo "{\"bench\": \"streams-summary\", \"maxCleanStreams\": $BEST, \"cpuPercent\": $BEST_CPU, \"peerCpuPercent\": $PEER_CPU}"
