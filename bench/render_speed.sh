#!/usr/bin/env bash
# `pipcompose render` against real time and against its floor, on the same pictures: for each scene, render SECONDS of
# it at 1280x720@30 to an MP4 (release build), then decode that file to raw I420 in memory and encode those same
# pictures with the same x264 settings (veryfast, constant quality 20, no B-frames, a key frame a second) as fast as
# gst-launch and ffmpeg can: what encoding alone costs, without drawing. Reports each one's speed (scene seconds per
# second) and render's time over the peer's; and, once per scene, the live way (`run --duration --record`). Scenes with
# web pages say how many times a page was started again (WPE stalls: docs/RUN.md). SCENES overrides the list.
# Usage: [SCENES="…"] bash bench/render_speed.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-30}"
ROUNDS="${2:-3}"
OUT="$(mktemp -d)"
RAWDIR="$(mktemp -d -p /dev/shm)"
trap 'rm -rf "$OUT" "$RAWDIR"' EXIT
release_binary
W=1280; H=720; FPS=30
FRAMES=$((SECS * FPS))
now() { date +%s.%N; }
speed() { awk -v s="$SECS" -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", s / (b - a) }'; }

SCENES="${SCENES:-demo examples/timecode.yaml examples/info-panel.yaml examples/web-lower-third.yaml examples/web-widgets.yaml}"
for scene in $SCENES; do
    arg=(); [ "$scene" = demo ] || arg=("$scene")
    for round in $(seq 1 "$ROUNDS"); do
        t0=$(now)
        "$BIN" render "${arg[@]}" --size ${W}x$H --fps $FPS --duration "$SECS" -o "$OUT/render.mp4" --overwrite \
            >"$OUT/render.log" 2>&1
        t1=$(now)
        ffmpeg -v error -y -i "$OUT/render.mp4" -f rawvideo -pix_fmt yuv420p "$RAWDIR/same.yuv"
        got=$(( $(stat -c %s "$RAWDIR/same.yuv") / (W * H * 3 / 2) ))
        t2=$(now)
        gst-launch-1.0 -q filesrc location="$RAWDIR/same.yuv" ! rawvideoparse width=$W height=$H format=i420 \
            framerate=$FPS/1 ! x264enc bframes=0 speed-preset=veryfast pass=qual quantizer=20 key-int-max=$FPS \
            ! h264parse ! mp4mux fragment-duration=1000 ! filesink location="$OUT/gst.mp4"
        t3=$(now)
        ffmpeg -v error -y -f rawvideo -pix_fmt yuv420p -s ${W}x$H -r $FPS -i "$RAWDIR/same.yuv" -c:v libx264 \
            -preset veryfast -crf 20 -bf 0 -g $FPS "$OUT/ffmpeg.mp4"
        t4=$(now)
        restarts=$(grep -c "started again" "$OUT/render.log" || true)
        printf "%s round %d: %d pages started again; %d frames (decoded back %d); render %s× real time; same pictures encoded: gst-launch %s×, ffmpeg %s×; render's time / gst-launch's %s\n" \
            "$scene" "$round" "$restarts" "$FRAMES" "$got" "$(speed "$t0" "$t1")" "$(speed "$t2" "$t3")" "$(speed "$t3" "$t4")" \
            "$(awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN { printf "%.2f", (b - a) / (d - c) }')"
    done
    # The same scene recorded live (`run --duration`), once: paced by the clock.
    t0=$(now)
    "$BIN" run "${arg[@]}" --no-control --size ${W}x$H --fps $FPS --duration "$SECS" --record "$OUT/run.mp4" \
        >"$OUT/run.log" 2>&1
    t1=$(now)
    printf "%s: run --duration %s --record: %s× real time\n" "$scene" "$SECS" "$(speed "$t0" "$t1")"
done
