#!/usr/bin/env bash
# Render cost per frame of the demo scene (release build), beside a peer that also draws text into raw
# frames: GStreamer's clockoverlay (Pango) on videotestsrc, with no encoder, in the same run.
# Usage: bash bench/render.sh [FRAMES]
set -euo pipefail
cd "$(dirname "$0")/.."
FRAMES="${1:-600}"
swift build -c release --product RenderBench >/dev/null 2>&1
BIN="$(swift build -c release --show-bin-path)/RenderBench"

echo "== pipcompose renderer, $FRAMES frames =="
"$BIN" --frames "$FRAMES" | tee /tmp/pipcompose-render.txt | grep -v '^JSON'

# Wall seconds of one gst-launch run of N frames.
gst_run() { # size frames overlay(0/1)
    local w="${1%x*}" h="${1#*x}" n="$2" overlay=""
    if [ "$3" = 1 ]; then overlay='! clockoverlay time-format=%H:%M:%S font-desc="Noto Sans Bold 48"'; fi
    local start end
    start=$(date +%s.%N)
    eval gst-launch-1.0 -q videotestsrc pattern=solid-color foreground-color=0xff203050 num-buffers="$n" \
        ! "video/x-raw,format=BGRx,width=$w,height=$h,framerate=30/1" $overlay ! fakesink sync=false
    end=$(date +%s.%N)
    awk -v s="$start" -v e="$end" 'BEGIN { printf "%.6f", e - s }'
}
# ms per frame with process start-up removed: (time of N frames - time of 1 frame) / (N - 1), best of 3.
per_frame() { # size overlay
    local best=""
    for _ in 1 2 3; do
        local one many
        one=$(gst_run "$1" 1 "$2"); many=$(gst_run "$1" "$FRAMES" "$2")
        best=$(awk -v o="$one" -v m="$many" -v n="$FRAMES" -v b="$best" 'BEGIN {
            v = (m - o) * 1000 / (n - 1); if (b == "" || v < b) printf "%.4f", v; else printf "%s", b }')
    done
    echo "$best"
}

echo "== peer: videotestsrc ! clockoverlay ! fakesink, ms per frame (start-up removed, best of 3) =="
for size in 1280x720 1920x1080; do
    p=$(per_frame "$size" 1); b=$(per_frame "$size" 0)
    ours=$(grep "^JSON" /tmp/pipcompose-render.txt | grep "\"$size\"" | grep '"changed"' | sed 's/.*"mean_ms":\([0-9.]*\).*/\1/')
    full=$(grep "^JSON" /tmp/pipcompose-render.txt | grep "\"$size\"" | grep '"full"' | sed 's/.*"mean_ms":\([0-9.]*\).*/\1/')
    awk -v s="$size" -v p="$p" -v b="$b" -v o="$ours" -v f="$full" 'BEGIN {
        printf "%s  peer %.3f ms (frame alone %.3f ms, overlay %.3f ms)  pipcompose changed %.3f ms, full %.3f ms  ratio changed/overlay %.2f, full/overlay %.2f\n",
            s, p, b, p - b, o, f, o / (p - b), f / (p - b) }'
done
