#!/usr/bin/env bash
# CPU cost of live encoding: pipcompose (demo scene, recording) beside the encoder's own floor and two peers
# that also draw text before x264, in one run, one after the other, same size, fps, duration and x264 settings.
# x264's cost depends on the content, so the fair floor is x264 encoding pipcompose's own pictures: the demo is
# recorded near-losslessly, decoded to raw I420, and fed to gst-launch's x264enc with the same settings, paced at
# the frame rate (clocksync); the cost of reading and pacing those frames alone is subtracted. The other floors
# are context: videotestsrc's still colour bars, its moving ball, and a scene that changes once a minute.
# Usage: bash bench/live.sh [WxH] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE="${1:-1280x720}"; SECS="${2:-20}"; FPS=30
W="${SIZE%x*}"; H="${SIZE#*x}"
FRAMES=$((SECS * FPS))
# The bitrate pipcompose picks for this size (0.09 bit per pixel at 30 fps), used for every peer.
BITRATE=$(( W * H * FPS * 9 / 100 / 1000 ))
X264="tune=zerolatency speed-preset=ultrafast bitrate=$BITRATE key-int-max=$FPS"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
swift build -c release --product pipcompose >/dev/null 2>&1
BIN="$(swift build -c release --show-bin-path)/pipcompose"

# Runs a command, prints "name cpu_seconds wall_seconds".
measure() {
    local name="$1"; shift
    /usr/bin/time -f "%U %S %e" -o "$OUT/time" "$@" >"$OUT/$name.log" 2>&1 || { echo "$name failed:"; tail -5 "$OUT/$name.log"; return 1; }
    awk -v n="$name" '{ printf "%s %.2f %.2f\n", n, $1 + $2, $3 }' "$OUT/time"
}

# The demo's own pictures, near-losslessly, then raw: the input of the fair floor.
"$BIN" run --no-control --size "$SIZE" --fps $FPS --duration "$SECS" --bitrate 60000 --record "$OUT/ref.mkv" \
    >"$OUT/ref.log" 2>&1
ffmpeg -v error -i "$OUT/ref.mkv" -f rawvideo -pix_fmt yuv420p -y "$OUT/ref.yuv"
RAW="filesrc location=$OUT/ref.yuv ! rawvideoparse width=$W height=$H format=i420 framerate=$FPS/1 ! clocksync"

{
measure same-pictures-x264 gst-launch-1.0 -q $RAW ! x264enc $X264 ! h264parse \
    ! mp4mux fragment-duration=500 ! filesink location="$OUT/same.mp4"
measure same-pictures-read gst-launch-1.0 -q $RAW ! fakesink
measure pipcompose "$BIN" run --no-control --size "$SIZE" --fps $FPS --duration "$SECS" --record "$OUT/pip.mp4"
measure pipcompose-static "$BIN" run --no-control examples/static-card.yaml --size "$SIZE" --fps $FPS --duration "$SECS" \
    --record "$OUT/static.mp4"
measure encoder-floor gst-launch-1.0 -q videotestsrc is-live=true num-buffers=$FRAMES \
    ! "video/x-raw,format=I420,width=$W,height=$H,framerate=$FPS/1" ! x264enc $X264 ! h264parse \
    ! mp4mux fragment-duration=500 ! filesink location="$OUT/floor.mp4"
measure encoder-floor-moving gst-launch-1.0 -q videotestsrc is-live=true pattern=ball num-buffers=$FRAMES \
    ! "video/x-raw,format=I420,width=$W,height=$H,framerate=$FPS/1" ! x264enc $X264 ! h264parse \
    ! mp4mux fragment-duration=500 ! filesink location="$OUT/floor-moving.mp4"
measure gst-clockoverlay gst-launch-1.0 -q videotestsrc is-live=true num-buffers=$FRAMES \
    ! "video/x-raw,format=I420,width=$W,height=$H,framerate=$FPS/1" \
    ! clockoverlay font-desc="Noto Sans Bold 48" ! x264enc $X264 ! h264parse \
    ! mp4mux fragment-duration=500 ! filesink location="$OUT/clock.mp4"
measure ffmpeg-drawtext ffmpeg -v error -re -f lavfi -i "testsrc2=size=${SIZE}:rate=$FPS" -t "$SECS" \
    -vf "drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf:text='%{localtime}':fontsize=48:fontcolor=white:x=40:y=40" \
    -c:v libx264 -preset ultrafast -tune zerolatency -b:v ${BITRATE}k -g $FPS -pix_fmt yuv420p -y "$OUT/ff.mp4"
} | tee "$OUT/results"

echo "frames in pipcompose's file: $(ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$OUT/pip.mp4")"
grep "^stopped" "$OUT/pipcompose.log" || true
awk -v frames="$FRAMES" '$1 == "encoder-floor" { floor = $2 } { cpu[$1] = $2; order[NR] = $1 }
     END { fair = cpu["same-pictures-x264"] - cpu["same-pictures-read"]
           printf "%-20s %10s %8s %10s\n", "run", "cpu s", "x floor", "x fair"
           for (i = 1; i <= NR; i++) printf "%-20s %10.2f %8.2f %10.2f\n", order[i], cpu[order[i]], cpu[order[i]] / floor, cpu[order[i]] / fair
           printf "fair floor (x264 on the same pictures, reading and pacing subtracted): %.2f cpu s\n", fair
           printf "pipcompose beyond the fair floor: %.2f cpu s, %.3f ms per frame (ratio %.2f)\n", cpu["pipcompose"] - fair,
                  (cpu["pipcompose"] - fair) * 1000 / frames, cpu["pipcompose"] / fair }' "$OUT/results"
