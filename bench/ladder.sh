#!/usr/bin/env bash
# The cost of a three-rung ladder (1280x720, 640x360, 416x234): pipcompose draws each rung with the layout of its
# own size (--rendition) and encodes it; the peer every server uses scales one picture down instead
# (gst-launch … tee ! videoscale ! x264enc per rung), with the same x264 settings on the same pictures (the demo
# scene as pipcompose draws it at 1280x720, see same_pictures in lib.sh).
#
# Four processes run side by side in each round, so the machine's moods reach them all alike: the peer with the
# 1280x720 rung alone and with all three, pipcompose with the main picture alone and with all three. What the two
# small rungs cost is each side's ladder less its single rung; the ratio of those is what drawing a rung costs
# against scaling one. The whole ladder is also set against pipcompose's single rung plus the peer's two scaled ones.
# (The small rungs' pictures differ, drawn or scaled: x264's cost differs with them, and that is in the figures.)
# Usage: bash bench/ladder.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
window_args 1280x720 30 "${1:-20}" "${2:-3}"
TICK=$(getconf CLK_TCK)
release_binary
same_pictures

# pipcompose's x264 settings for a rung of W x H (its default bitrate: 0.09 bit per pixel, 300 kbit/s at least).
x264_for() {
    local b=$(( $1 * $2 * FPS * 9 / 100 / 1000 ))
    [ "$b" -lt 300 ] && b=300
    echo "tune=zerolatency speed-preset=ultrafast bitrate=$b key-int-max=$FPS"
}
Q="queue max-size-buffers=3 max-size-bytes=0 max-size-time=0"
rung() { # WIDTH HEIGHT NAME: one scaled rung of the peer, from the tee
    echo "t. ! $Q ! videoscale ! video/x-raw,width=$1,height=$2 ! x264enc $(x264_for "$1" "$2") ! $MUX location=$OUT/$3.mp4"
}

for round in $(seq 1 "$ROUNDS"); do
    launch same-pictures-one gst-launch-1.0 -q $RAW ! x264enc $(x264_for 1280 720) ! $MUX location="$OUT/one.mp4"
    # shellcheck disable=SC2046
    launch same-pictures-ladder gst-launch-1.0 -q $RAW ! tee name=t \
        t. ! $Q ! x264enc $(x264_for 1280 720) ! $MUX location="$OUT/peer-720.mp4" \
        $(rung 640 360 peer-360) $(rung 416 234 peer-234)
    launch pipcompose-one "$BIN" run --no-control --size "$SIZE" --fps "$FPS" --duration "$RUN" \
        --record "$OUT/pip-one.mp4"
    launch pipcompose-ladder "$BIN" run --no-control --size "$SIZE" --fps "$FPS" --duration "$RUN" \
        --rendition 640x360 --rendition 416x234 --record "$OUT/pip-720.mp4" --record "$OUT/pip-360.mp4@640x360" \
        --record "$OUT/pip-234.mp4@416x234"
    # Not in a pipe: measure_launched empties the launch list of this shell.
    measure_launched >"$OUT/round"
    sed "s/^/round $round /" "$OUT/round"
done | tee "$OUT/results"

# Every rung of both ladders has every frame.
for f in peer-720 peer-360 peer-234 pip-720 pip-360 pip-234; do
    printf "%s: %s\n" "$f" "$(ffprobe -v error -select_streams v -show_entries stream=width,height -of csv=p=0 "$OUT/$f.mp4")"
done

echo
echo "$SIZE@$FPS + 640x360 + 416x234, $SECS s ($FRAMES frames) per round after ${WARM} s; CPU seconds in the window"
awk -v frames="$FRAMES" "$HALF95_AWK"'
    $3 == "same-pictures-one" { p1[$2] = $4 } $3 == "same-pictures-ladder" { p3[$2] = $4 }
    $3 == "pipcompose-one" { o1[$2] = $4 } $3 == "pipcompose-ladder" { o3[$2] = $4; n = $2 }
    END {
        printf "%-6s %10s %10s %10s %10s %14s %14s %12s %12s\n", "round", "peer one", "peer 3", "pip one", "pip 3",
               "peer 2 rungs", "pip 2 rungs", "rungs ratio", "whole ratio"
        for (r = 1; r <= n; r++) {
            pr = p3[r] - p1[r]; orr = o3[r] - o1[r]
            rr[r] = orr / pr; wr[r] = o3[r] / (o1[r] + pr); srr += rr[r]; swr += wr[r]
            printf "%-6d %10.2f %10.2f %10.2f %10.2f %14.2f %14.2f %12.3f %12.3f\n", r, p1[r], p3[r], o1[r], o3[r], pr, orr, rr[r], wr[r]
        }
        printf "mean: drawing the two small rungs costs %.3f times scaling them (", srr / n
        if (n > 1) { h = half95(rr, n); printf "95 %% interval %.3f to %.3f", srr / n - h, srr / n + h } else printf "one round"
        printf "); the whole ladder %.3f times pipcompose'"'"'s one rung plus the peer'"'"'s two\n", swr / n
        for (r = 1; r <= n; r++) { so3 += o3[r]; sd2 += o3[r] - o1[r] }
        printf "pipcompose ladder: %.1f %% of a core; its two small rungs %.3f ms/frame (means)\n", so3 / n / '"$SECS"' * 100,
               sd2 / n * 1000 / frames
    }' "$OUT/results"
