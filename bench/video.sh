#!/usr/bin/env bash
# What a video layer costs: pipcompose recording a scene whose one full-frame layer plays a 1280x720@30 H.264 clip
# (longer than the run), the same scene with the layer replaced by nothing (a plain background), and the peer floor for the
# layer alone: gst-launch decoding the same clip at its own pace and scaling it to the same BGRx the layer takes.
# The layer's own overhead = (with layer − without) − peer decode; per frame and as a ratio. And against the fair
# floor: gst-launch decoding the clip and encoding it again with pipcompose's x264 settings, recorded the same way.
# Usage: bash bench/video.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
SECS="${1:-20}"; ROUNDS="${2:-3}"
SIZE=1280x720; FPS=30; WARM=5
FRAMES=$((SECS * FPS))
RUN=$((WARM + SECS + 3))
TICK=$(getconf CLK_TCK)
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
source bench/lib.sh
release_binary

ffmpeg -v error -y -f lavfi -i "testsrc2=size=1280x720:rate=30" -t $((RUN + 10)) -c:v libx264 -preset veryfast -pix_fmt yuv420p \
    "$OUT/clip.mp4"
cat >"$OUT/with.yaml" <<YAML
size: $SIZE
fps: $FPS
background: "#203040"
widgets:
  - {id: layer, type: video, source: $OUT/clip.mp4, loop: true, place: background}
YAML
cat >"$OUT/without.yaml" <<YAML
size: $SIZE
fps: $FPS
background: "#203040"
widgets: []
YAML

for round in $(seq 1 "$ROUNDS"); do
    echo "round $round"
    steady pipcompose-without "$BIN" run "$OUT/without.yaml" --no-control --duration "$RUN" --record "$OUT/without.mp4"
    steady pipcompose-layer "$BIN" run "$OUT/with.yaml" --no-control --duration "$RUN" --record "$OUT/with.mp4"
    steady gst-decode gst-launch-1.0 -q filesrc location="$OUT/clip.mp4" ! qtdemux ! h264parse \
        ! avdec_h264 ! videoscale add-borders=true ! videoconvert \
        ! video/x-raw,format=BGRx,width=1280,height=720,pixel-aspect-ratio=1/1 ! fakesink sync=true
    # The fair floor: the same clip decoded and encoded again with pipcompose's x264 settings and recorded as it
    # records, at the same pace: what a layer of these pictures cannot cost less than.
    steady gst-decode-encode gst-launch-1.0 -q filesrc location="$OUT/clip.mp4" ! qtdemux ! h264parse ! avdec_h264 \
        ! videoconvert ! video/x-raw,format=I420 ! x264enc tune=zerolatency speed-preset=ultrafast bitrate=2488 \
        key-int-max=30 ! h264parse ! mp4mux fragment-duration=500 ! filesink location="$OUT/peer.mp4" sync=true
done | tee "$OUT/results"
echo
echo "$SIZE@$FPS, window ${SECS} s ($FRAMES frames) after ${WARM} s, $ROUNDS rounds"
awk -v f="$FRAMES" '$1 ~ /-threads$/ { next } NF == 2 { sum[$1] += $2; n[$1]++ }
     END { w = sum["pipcompose-without"] / n["pipcompose-without"]; l = sum["pipcompose-layer"] / n["pipcompose-layer"]
           g = sum["gst-decode"] / n["gst-decode"]; e = sum["gst-decode-encode"] / n["gst-decode-encode"]
           printf "mean cpu s: without %.2f, with the layer %.2f, peer decode alone %.2f, peer decode + encode %.2f\n", w, l, g, e
           printf "the layer adds %.2f s; beyond the peer decode %.2f s = %.3f ms per frame; (with) / (without + decode) = x%.3f\n",
                  l - w, l - w - g, (l - w - g) * 1000 / f, l / (w + g)
           printf "against decode + encode of the same pictures: %.2f s = %.3f ms per frame beyond it (x%.3f)\n",
                  l - e, (l - e) * 1000 / f, l / e }' "$OUT/results"
