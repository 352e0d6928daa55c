#!/usr/bin/env bash
# pipcompose's cost beyond x264, with x264's own cost taken out of both sides by a profiler.
#
# bench/live.sh compares whole processes: pipcompose against gst-launch's x264 on the same pictures. x264 is about
# nine tenths of both and its own cost moves between windows, so a round's ratio moves more than the 6 % asked for.
# Here the floor (x264 on pipcompose's own pictures, see same_pictures in lib.sh), the same source paced into
# fakesink and pipcompose run side by side under `perf record` (cpu-clock samples); samples in libx264 are counted
# apart, and the floor's reading thread is left out (same_pictures: it reads ahead of a short queue). If the
# pictures are the same, x264 costs the same in both (the report shows it), and pipcompose's cost beyond x264 is
# its samples outside libx264 less the floor's outside libx264 and outside its reader, less the pacing alone.
# Also split by thread.
# Usage: bash bench/overhead.sh [WxH] [FPS] [SECONDS] [ROUNDS]   (needs perf: apt-get install linux-perf)
# ENCODER_THREADS=N in the environment runs x264 with N threads on both sides (default: x264 chooses).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
window_args "$@"
HZ=999
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf" >&2; exit 1; }
release_binary
same_pictures

# "total x264 reader" samples of a recording (reader: the floor's reading thread, left out), and per thread the
# samples outside libx264 ("thread" lines).
samples() {
    perf report -i "$1" --stdio -q -g none --sort comm,dso -F sample,comm,dso 2>/dev/null | awk -v re="$READER_THREAD" '
        { n = $1; dso = $NF; comm = $2; for (i = 3; i < NF; i++) comm = comm " " $i
          total += n; if (comm ~ re) r += n; else if (dso ~ /libx264/) x += n; else other[comm] += n }
        END { printf "%d %d %d\n", total, x, r; for (c in other) printf "thread %s %d\n", c, other[c] }'
}

for round in $(seq 1 "$ROUNDS"); do
    gst-launch-1.0 -q $RAW ! x264enc $X264 ! $MUX location="$OUT/same.mp4" >"$OUT/floor.log" 2>&1 &
    floor=$!
    gst-launch-1.0 -q $RAW ! fakesink >"$OUT/pace.log" 2>&1 &
    pace=$!
    "$BIN" run --no-control --size "$SIZE" --fps "$FPS" --duration "$RUN" "${PIP_X264[@]}" --record "$OUT/pip.mp4" >"$OUT/pip.log" 2>&1 &
    pip=$!
    sleep "$WARM"
    recorders=()
    for p in floor:$floor pace:$pace pip:$pip; do
        perf record -q -e cpu-clock -F "$HZ" -o "$OUT/${p%%:*}.data" -p "${p#*:}" -- sleep "$SECS" >/dev/null 2>&1 &
        recorders+=("$!")
    done
    wait "${recorders[@]}" || true
    kill -INT "$floor" "$pace" "$pip" 2>/dev/null || true
    wait "$floor" "$pace" "$pip" || true
    for k in floor pace pip; do
        samples "$OUT/$k.data" >"$OUT/$k.samples"
        echo "round $round $k $(head -1 "$OUT/$k.samples")"
    done
    grep "^thread" "$OUT/pip.samples" | sed "s/^/round $round pip-/"
done | tee "$OUT/results"

echo
echo "$SIZE@$FPS, $SECS s ($FRAMES frames) per round after ${WARM} s, perf at $HZ Hz (a sample is about 1 ms of CPU)"
awk -v frames="$FRAMES" -v hz="$HZ" "$HALF95_AWK"'
    # "round R NAME total x264 reader"; the floor and the pacing run without their reading thread.
    $3 == "floor" { ft[$2] = $4 - $6; fx[$2] = $5; fr[$2] = $6 }
    $3 == "pace" { rt[$2] = $4 - $6 }
    $3 == "pip" { pt[$2] = $4; px[$2] = $5; n = $2 }
    $3 ~ /^pip-thread/ { c = $4; for (i = 5; i < NF; i++) c = c " " $i; th[c] += $NF; seen[c] = 1 }
    END {
        ms = 1000 / hz / frames
        printf "%-6s %12s %12s %12s %12s %14s %16s\n", "round", "floor x264", "pip x264", "floor other", "(reader)", "pacing", "pip other"
        for (r = 1; r <= n; r++) {
            printf "%-6d %12d %12d %12d %12d %14d %16d\n", r, fx[r], px[r], ft[r] - fx[r], fr[r], rt[r], pt[r] - px[r]
            beyond = (pt[r] - px[r]) - (ft[r] - fx[r] - rt[r]); sb += beyond; b[r] = beyond * ms
            whole = pt[r] - (ft[r] - rt[r]); sw += whole
            ratio[r] = 1 + beyond / (ft[r] - rt[r]); sr += ratio[r]
            if (r == 1 || beyond < lo) lo = beyond; if (r == 1 || beyond > hi) hi = beyond
            printf "       beyond x264: %.3f ms/frame; x264 itself: pipcompose %+.1f %% against the floor; whole processes: %.3f ms/frame beyond\n",
                   beyond * ms, (px[r] / fx[r] - 1) * 100, whole * ms
        }
        printf "over %d rounds: pipcompose beyond x264 %.3f ms/frame (rounds %.3f to %.3f); whole processes %.3f ms/frame beyond the fair floor\n",
               n, sb * ms / n, lo * ms, hi * ms, sw * ms / n
        # How sure the mean is.
        if (n > 1) {
            mean = sb * ms / n; half = half95(b, n)
            printf "  standard deviation %.3f; 95 %% interval of the mean %.3f to %.3f ms/frame; ratio to the floor %.3f on average\n",
                   sd, mean - half, mean + half, sr / n
        }
        printf "pipcompose outside libx264, by thread (ms/frame, mean of the rounds):"
        for (c in seen) printf "  %s %.3f", c, th[c] * ms / n
        printf "\n"
    }' "$OUT/results"
