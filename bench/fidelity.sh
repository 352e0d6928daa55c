#!/usr/bin/env bash
# Picture fidelity per client path: what each kind of viewer really saw, compared frame by frame with
# pipcompose's own render of the same frame (probe --reference), over one long run.
#
#   bash bench/fidelity.sh [SECONDS] [SIZE]      (defaults: 600 s, 640x360; the info-panel scene at 30 fps)
#
# Paths, all watching the same stream at the same time:
#   gst-tcp, gst-udp   GStreamer's rtspsrc (pipcompose probe, live, every frame it can compare)
#   ffmpeg-tcp/udp     ffmpeg, decoded and stored losslessly (x264 -qp 0), then compared frame by frame
#   ffmpeg-relay       ffmpeg behind a TCP relay that adds 100 ms (a port-forward, a proxy)
# Prints one line per path: frames, compared, SSIM p1/p50/min, PSNR p1/p50, corrupt frames, unreadable strips.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
SECONDS_RUN=${1:-600}
SIZE=${2:-640x360}
FRAMES=$((SECONDS_RUN * 30))
SCENE=examples/info-panel.yaml
release_binary
WORK=$(mktemp -d)
trap 'stop_source; kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
PORT=$(free_port)
start_source "$WORK/source.log" "$SCENE" --size "$SIZE" --rtsp "127.0.0.1:$PORT/pip"
URL="rtsp://127.0.0.1:$PORT/pip"
python3 Tests/Fixtures/tcp_relay.py --target "127.0.0.1:$PORT" --port 0 --delay-ms 100 >"$WORK/relay.out" &
for _ in $(seq 1 50); do grep -q listening "$WORK/relay.out" 2>/dev/null && break; sleep 0.1; done
RELAY="rtsp://127.0.0.1:$(awk '{print $2}' "$WORK/relay.out")/pip"

PIDS=()
for t in tcp udp; do
    "$BIN" probe "$URL" --transport $t --duration "$SECONDS_RUN" --reference "$SCENE" --json --quiet \
        >"$WORK/gst-$t.json" 2>"$WORK/gst-$t.err" &
    PIDS+=($!)
done
record() { # name url transport
    ffmpeg -v error -rtsp_transport "$3" -i "$2" -frames:v "$FRAMES" -c:v libx264 -qp 0 -preset ultrafast \
        -y "$WORK/$1.mkv" 2>"$WORK/$1.err"
}
record ffmpeg-tcp "$URL" tcp & PIDS+=($!)
record ffmpeg-udp "$URL" udp & PIDS+=($!)
record ffmpeg-relay "$RELAY" tcp & PIDS+=($!)
for p in "${PIDS[@]}"; do wait "$p" || true; done
stop_source
for name in ffmpeg-tcp ffmpeg-udp ffmpeg-relay; do
    "$BIN" probe "$WORK/$name.mkv" --reference "$SCENE" --json --quiet >"$WORK/$name.json" 2>"$WORK/$name.err" || true
done

echo "fidelity over ${SECONDS_RUN} s at $SIZE@30, scene $SCENE ($(date -u +%Y-%m-%dT%H:%MZ))"
python3 - "$WORK" <<'EOF'
import json, sys, os
work = sys.argv[1]
print(f"{'path':14} {'frames':>7} {'compared':>8} {'SSIM p1':>8} {'p50':>7} {'min':>7} {'PSNR p1':>8} {'p50':>6} {'corrupt':>7} {'unread':>6} {'dropped':>7}")
for name in ["gst-tcp", "gst-udp", "ffmpeg-tcp", "ffmpeg-udp", "ffmpeg-relay"]:
    try:
        d = json.load(open(os.path.join(work, name + ".json")))
    except Exception as e:
        print(f"{name:14} no report: {open(os.path.join(work, name + '.err')).read()[-200:]}")
        continue
    t, f = d["total"], d["fidelity"]["total"]
    fmt = lambda v, p: "-" if v is None else f"{v:.{p}f}"
    print(f"{name:14} {t['frames']:>7} {f['compared']:>8} {fmt(f.get('ssimP1'),4):>8} {fmt(f.get('ssimP50'),4):>7} "
          f"{fmt(f['ssimMin'],4):>7} {fmt(f.get('psnrP1'),1):>8} {fmt(f.get('psnrP50'),1):>6} {f['corrupt']:>7} "
          f"{f.get('unreadable',0):>6} {t['dropped']:>7}")
EOF
