#!/usr/bin/env bash
# Two builds of pipcompose side by side: what one change saved or cost, with x264 taken out by a profiler.
#
# Both record the demo scene at the same size and rate over the same window under `perf record`, so a slow minute of
# the machine hits both; the pictures are the same, so x264 must cost the same in both (the report shows it), and the
# difference of their samples outside libx264 is the change's. Keep a build before a change with
# `cp "$(swift build -c release --show-bin-path)/pipcompose" /tmp/pip-before`.
# Usage: bash bench/versus.sh BIN_A BIN_B [WxH] [FPS] [SECONDS] [ROUNDS]   (needs perf: apt-get install linux-perf)
# SCENE=FILE in the environment (a path from the checkout's root, or absolute) records that scene instead of the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
[ $# -ge 2 ] || { echo "usage: bash bench/versus.sh BIN_A BIN_B [WxH] [FPS] [SECONDS] [ROUNDS]" >&2; exit 2; }
A="$1"; B="$2"; shift 2
for bin in "$A" "$B"; do [ -x "$bin" ] || { echo "$bin is not an executable" >&2; exit 2; }; done
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf" >&2; exit 1; }
window_args "$@"
HZ=999
# A binary copied out of the checkout still finds the pipeline templates.
export PIPCOMPOSE_PIPELINES="${PIPCOMPOSE_PIPELINES:-$PWD/pipelines}"

# "outside inside" libx264 samples of a recording.
split() {
    perf report -i "$1" --stdio -q -g none --sort dso -F sample,dso 2>/dev/null |
        awk '{ t += $1; if ($NF ~ /libx264/) x += $1 } END { printf "%d %d\n", t - x, x }'
}
# "thread K COMM SAMPLES" per thread, outside libx264: a change confined to one thread shows there with far less
# noise than in the whole process, where x264's own variation between two processes is several times larger.
threads() {
    perf report -i "$2" --stdio -q -g none --sort comm,dso -F sample,comm,dso 2>/dev/null | awk -v k="$1" '
        $NF !~ /libx264/ { c = $2; for (i = 3; i < NF; i++) c = c "_" $i; n[c] += $1 }
        END { for (c in n) printf "thread %s %s %d\n", k, c, n[c] }'
}

for round in $(seq 1 "$ROUNDS"); do
    # Which one starts first alternates from round to round: the first started read a little differently.
    order="a b"; [ $((round % 2)) = 0 ] && order="b a"
    declare -A pid=()
    for k in $order; do
        bin="$A"; [ "$k" = b ] && bin="$B"
        "$bin" run --no-control ${SCENE:+"$SCENE"} --size "$SIZE" --fps "$FPS" --duration "$RUN" --record "$OUT/$k.mp4" >"$OUT/$k.log" 2>&1 &
        pid[$k]=$!
    done
    sleep "$WARM"
    recorders=()
    for k in $order; do
        perf record -q -e cpu-clock -F "$HZ" -o "$OUT/$k.data" -p "${pid[$k]}" -- sleep "$SECS" >/dev/null 2>&1 &
        recorders+=("$!")
    done
    wait "${recorders[@]}" || true
    kill -INT "${pid[a]}" "${pid[b]}" 2>/dev/null || true
    wait "${pid[a]}" "${pid[b]}" || true
    echo "round $round $(split "$OUT/a.data") $(split "$OUT/b.data")"
    threads a "$OUT/a.data"
    threads b "$OUT/b.data"
done | tee "$OUT/results" | grep -v "^thread"

echo
echo "A = $A"
echo "B = $B"
echo "$SIZE@$FPS, $SECS s ($FRAMES frames) per round after ${WARM} s, perf at $HZ Hz (a sample is about 1 ms of CPU)"
awk -v frames="$FRAMES" -v hz="$HZ" '
    $1 == "thread" { t[$3] = 1; s2[$2, $3] += $4; next }
    { r = $2; ao[r] = $3; ax[r] = $4; bo[r] = $5; bx[r] = $6; n = r }
    END {
        ms = 1000 / hz / frames
        printf "%-6s %14s %14s %14s %14s %18s\n", "round", "A outside x264", "B outside x264", "A libx264", "B libx264", "B - A (ms/frame)"
        for (i = 1; i <= n; i++) {
            d = (bo[i] - ao[i]) * ms; s += d
            printf "%-6d %14d %14d %14d %14d %+18.3f\n", i, ao[i], bo[i], ax[i], bx[i], d
        }
        printf "over %d rounds: B - A outside libx264 %+.3f ms/frame\n", n, s / n
        printf "by thread, outside libx264 (ms/frame, mean of the rounds): A / B / B - A\n"
        for (c in t) printf "  %-18s %.3f / %.3f / %+.3f\n", c, s2["a", c] * ms / n, s2["b", c] * ms / n, (s2["b", c] - s2["a", c]) * ms / n
    }' "$OUT/results"
