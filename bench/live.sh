#!/usr/bin/env bash
# CPU cost of live encoding at steady state: pipcompose (demo scene, recording to MP4) against x264 encoding the
# same pictures, with peers that also draw before x264 as context; every run in one session, same size, fps and
# x264 settings.
#
# x264's cost depends on the content, so the fair floor is x264 encoding pipcompose's own pictures: the demo is
# recorded near-losslessly, decoded to raw I420, and fed to gst-launch's x264enc with pipcompose's settings, paced
# at the frame rate (clocksync), muxed as pipcompose muxes; the thread that reads the frames is left out and the
# cost of pacing them alone (the same source into fakesink, its reading thread left out too) is subtracted. Each
# process is measured over a window after a warm-up (CPU time from /proc at both ends), so start-up (fonts, plugin
# registry) is not spread over the frames; it is reported on its own line. In each round the floor, its pacing
# alone and pipcompose run side by side over the same window (x264 alone on the same
# frames varied 14-28 % between windows run one after the other, several times the difference measured), then
# the other peers one after the other.
# Usage: bash bench/live.sh [WxH] [FPS] [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
window_args "$@"
# The bitrate pipcompose picks for this size and rate (0.09 bit per pixel), used for every peer.
BITRATE=$(( W * H * FPS * 9 / 100 / 1000 ))
TICK=$(getconf CLK_TCK)
release_binary

# The demo's own pictures, near-losslessly, then raw: the input of the fair floor, long enough for the window.
same_pictures
LIVE="is-live=true num-buffers=$((RUN * FPS))"
CAPS="video/x-raw,format=I420,width=$W,height=$H,framerate=$FPS/1"

# Start-up: CPU of a run that ends after its first frames.
/usr/bin/time -f "%U %S" -o "$OUT/startup" "$BIN" run --no-control --size "$SIZE" --fps "$FPS" --duration 0.2 \
    --record "$OUT/startup.mp4" >/dev/null 2>&1
echo "startup $(awk '{ printf "%.2f", $1 + $2 }' "$OUT/startup")"

for round in $(seq 1 "$ROUNDS"); do
    echo "round $round"
    # The fair floor, its pacing alone and pipcompose side by side, over the same window.
    launch same-pictures-x264 gst-launch-1.0 -q $RAW ! x264enc $X264 ! $MUX location="$OUT/same.mp4"
    launch same-pictures-pace gst-launch-1.0 -q $RAW ! fakesink
    launch pipcompose "$BIN" run --no-control --size "$SIZE" --fps "$FPS" --duration "$RUN" "${PIP_X264[@]}" --record "$OUT/pip.mp4"
    measure_launched
    steady gst-clockoverlay gst-launch-1.0 -q videotestsrc $LIVE ! "$CAPS" \
        ! clockoverlay font-desc="Noto Sans Bold 48" ! x264enc $X264 ! $MUX location="$OUT/clock.mp4"
    steady ffmpeg-drawtext ffmpeg -v error -re -f lavfi -i "testsrc2=size=${SIZE}:rate=$FPS" -t "$RUN" \
        -vf "drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf:text='%{localtime}':fontsize=48:fontcolor=white:x=40:y=40" \
        -c:v libx264 -preset ultrafast -tune zerolatency -b:v ${BITRATE}k -g "$FPS" -pix_fmt yuv420p -y "$OUT/ff.mp4"
    steady colour-bars-x264 gst-launch-1.0 -q videotestsrc $LIVE ! "$CAPS" ! x264enc $X264 ! $MUX location="$OUT/bars.mp4"
done | tee "$OUT/results"

grep "^stopped" "$OUT/pipcompose.log" || true
echo
echo "$SIZE@$FPS, window ${SECS} s ($FRAMES frames) after ${WARM} s, $ROUNDS rounds"
awk -v frames="$FRAMES" "$HALF95_AWK"'
    /^round/ { r = $2; next }
    $1 ~ /-threads$/ || $1 ~ /-reader$/ { next }
    { cpu[r, $1] = $2; if (!($1 in seen)) { seen[$1] = 1; names[++n] = $1 } }
    END {
        printf "%-20s", "run"; for (i = 1; i <= r; i++) printf " %9s", "round " i; printf " %9s %9s\n", "x fair min", "x fair max"
        for (k = 1; k <= n; k++) {
            name = names[k]; printf "%-20s", name; lo = 1e9; hi = 0
            for (i = 1; i <= r; i++) {
                fair = cpu[i, "same-pictures-x264"] - cpu[i, "same-pictures-pace"]
                printf " %9.2f", cpu[i, name]; x = cpu[i, name] / fair; if (x < lo) lo = x; if (x > hi) hi = x
            }
            printf " %9.2f %9.2f\n", lo, hi
        }
        lo = 1e9; hi = -1e9
        for (i = 1; i <= r; i++) {
            fair = cpu[i, "same-pictures-x264"] - cpu[i, "same-pictures-pace"]
            ms = (cpu[i, "pipcompose"] - fair) * 1000 / frames
            printf "round %d: fair floor %.2f cpu s; pipcompose %.2f; beyond the floor %.3f ms/frame (ratio %.3f)\n",
                   i, fair, cpu[i, "pipcompose"], ms, cpu[i, "pipcompose"] / fair
            if (ms < lo) lo = ms; if (ms > hi) hi = ms; beyond[i] = ms; msum += ms
        }
        printf "pipcompose beyond the fair floor: %.3f to %.3f ms per frame over %d rounds\n", lo, hi, r
        if (r > 1) {
            half = half95(beyond, r)
            printf "  mean of the rounds %.3f ms/frame, standard deviation %.3f, 95 %% interval of the mean %.3f to %.3f\n",
                   msum / r, sd, msum / r - half, msum / r + half
        }
        # x264 alone varies between rounds on the very same frames: the spread of the floor itself, and the ratio
        # of the sums over all rounds, which that spread moves less than any one round.
        flo = 1e9; fhi = 0; fsum = 0; psum = 0
        for (i = 1; i <= r; i++) {
            fair = cpu[i, "same-pictures-x264"] - cpu[i, "same-pictures-pace"]
            if (fair < flo) flo = fair; if (fair > fhi) fhi = fair; fsum += fair; psum += cpu[i, "pipcompose"]
        }
        printf "the fair floor itself: %.2f to %.2f cpu s over the rounds (%.0f%% apart)\n", flo, fhi, (fhi / flo - 1) * 100
        printf "all rounds together: pipcompose %.2f cpu s, fair floor %.2f: ratio %.3f, %.3f ms per frame beyond\n",
               psum, fsum, psum / fsum, (psum - fsum) * 1000 / (frames * r)
    }' "$OUT/results"
grep -- "-threads" "$OUT/results" | sed 's/^/threads: /'
grep -- "-reader " "$OUT/results" | sed 's/^/left out (reading the raw frames): /'
