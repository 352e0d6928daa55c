#!/usr/bin/env bash
# What a reference probe costs beside the peers that only decode: one pipcompose run serving the info panel over
# RTSP, and at the same time, on the same pictures, ffmpeg decoding it to null, gst-launch decoding it to fakesink,
# `pipcompose probe` counting frames, and `pipcompose probe --reference` comparing every frame it can with the scene.
# Prints each client's CPU seconds over the window and its ratio to ffmpeg's, and the reference probe's frames
# compared. The hour (bench/everything.sh) runs four reference probes beside the run: what they cost is what the
# run does not get.
#
#   bash bench/probe_cost.sh [WxH] [SECONDS]          (defaults: 1280x720, 30)
#
# SCENE=path picks another scene (default examples/info-panel.yaml). BEFORE=/path/to/an/older/pipcompose adds that
# binary's reference probe to the same run (a change's effect, on the same pictures at the same time); its reference
# must draw the scene as this build does, or it compares every frame with several candidates and costs more for it.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SIZE="${1:-1280x720}"; SECS="${2:-30}"
OUT="$(mktemp -d)"
CLIENTS=()
trap 'for p in "${CLIENTS[@]}"; do kill "$p" 2>/dev/null || true; done; stop_source; rm -rf "$OUT"' EXIT
release_binary
SCENE="${SCENE:-examples/info-panel.yaml}"
PORT=$(free_port)
start_source "$OUT/run.log" "$SCENE" --size "$SIZE" --rtsp "127.0.0.1:$PORT/pip" --status-every 1
URL="rtsp://127.0.0.1:$PORT/pip"
RUN_FOR=$((SECS + 15))

declare -A PIDS
ffmpeg -nostdin -v error -rtsp_transport tcp -i "$URL" -f null - >"$OUT/ffmpeg.log" 2>&1 &
PIDS[ffmpeg]=$!
gst-launch-1.0 -q rtspsrc location="$URL" protocols=tcp latency=200 ! decodebin ! fakesink sync=false \
    >"$OUT/gst.log" 2>&1 &
PIDS[gst-launch]=$!
"$BIN" probe "$URL" --transport tcp --duration "$RUN_FOR" --json --quiet >"$OUT/count.json" 2>"$OUT/count.log" &
PIDS[probe]=$!
"$BIN" probe "$URL" --transport tcp --reference "$SCENE" --duration "$RUN_FOR" --json --quiet \
    >"$OUT/reference.json" 2>"$OUT/reference.log" &
PIDS[probe-reference]=$!
if [ -n "${BEFORE:-}" ]; then
    "$BEFORE" probe "$URL" --transport tcp --reference "$SCENE" --duration "$RUN_FOR" --json --quiet \
        >"$OUT/before.json" 2>"$OUT/before.log" &
    PIDS[before-reference]=$!
fi
CLIENTS=("${PIDS[@]}")

# Each client's ticks once all of them decode (the probes' reports come at the end; the run's log counts viewers).
wait_for_line "$OUT/run.log" "viewers ${#PIDS[@]}" "$SRC" "not every client joined" || true
sleep 5   # past the clients' start-up (their first key frame, the reference's first layout): not a synchronisation
declare -A T0 T1
for n in "${!PIDS[@]}"; do T0[$n]=$(ticks "${PIDS[$n]}"); done
sleep "$SECS"
for n in "${!PIDS[@]}"; do T1[$n]=$(ticks "${PIDS[$n]}"); done
kill "${PIDS[ffmpeg]}" "${PIDS[gst-launch]}" 2>/dev/null || true
for n in probe probe-reference before-reference; do [ -n "${PIDS[$n]:-}" ] && wait "${PIDS[$n]}" || true; done

HZ=$(getconf CLK_TCK)
base=$(( T1[ffmpeg] - T0[ffmpeg] ))
echo "probe_cost $SIZE, ${SECS} s window, the same stream at the same time (CPU seconds; ratio to ffmpeg's)"
for n in ffmpeg gst-launch probe probe-reference before-reference; do
    [ -n "${PIDS[$n]:-}" ] || continue
    d=$(( T1[$n] - T0[$n] ))
    printf '  %-17s %7.2f  %5.2f\n' "$n" "$(echo "$d / $HZ" | bc -l)" "$(echo "$d / $base" | bc -l)"
done
for n in reference before; do
    [ -s "$OUT/$n.json" ] || continue
    python3 - "$OUT/$n.json" "$n" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
f = (r.get("fidelity") or {}).get("total", {})
print(f"  {sys.argv[2]}: frames {r['total'].get('frames')}, compared {f.get('compared')}, skipped {f.get('skipped')}, "
      f"corrupt {f.get('corrupt')}, lowest SSIM {f.get('ssimMin')}")
EOF
done
