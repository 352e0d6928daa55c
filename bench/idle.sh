#!/usr/bin/env bash
# What a run nobody watches costs, beside the peer: plain gst-rtsp-server (Python, the same x264 settings), whose
# shared media is built only when a viewer asks. Then how long an idle stream takes from a viewer's request to its
# first decoded frame: `probe`'s joinMs (from its start, RTSP OPTIONS/DESCRIBE/SETUP/PLAY included) on each.
# Usage: bash bench/idle.sh [SECONDS] [JOINS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-20}"; JOINS="${2:-5}"
WARM=5
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"; [ -n "${PEER:-}" ] && kill "$PEER" 2>/dev/null; [ -n "${SRC:-}" ] && kill "$SRC" 2>/dev/null; true' EXIT
TICK=$(getconf CLK_TCK)
release_binary

PORT_PIP=$(free_port); PORT_PEER=$(free_port)
/usr/bin/python3 - "$PORT_PEER" >"$OUT/peer.log" 2>&1 <<'PY' &
import sys, gi
gi.require_version("Gst", "1.0"); gi.require_version("GstRtspServer", "1.0")
from gi.repository import Gst, GstRtspServer, GLib
Gst.init(None)
server = GstRtspServer.RTSPServer(address="127.0.0.1", service=sys.argv[1])
factory = GstRtspServer.RTSPMediaFactory()
factory.set_launch("( videotestsrc is-live=true pattern=smpte ! video/x-raw,width=1280,height=720,framerate=30/1 "
                   "! x264enc tune=zerolatency speed-preset=ultrafast bitrate=2488 key-int-max=30 ! rtph264pay name=pay0 pt=96 )")
factory.set_shared(True)
server.get_mount_points().add_factory("/peer", factory)
server.attach(None)
print("serving", flush=True)
GLib.MainLoop().run()
PY
PEER=$!
wait_for_line "$OUT/peer.log" "^serving" "$PEER" "the peer did not start"
start_source "$OUT/pip.log" --size 1280x720 --rtsp "127.0.0.1:$PORT_PIP/pip"

sleep "$WARM"
a_pip=$(ticks "$SRC"); a_peer=$(ticks "$PEER")
sleep "$SECS"
b_pip=$(ticks "$SRC"); b_peer=$(ticks "$PEER")
awk -v s="$SECS" -v t="$TICK" -v p="$((b_pip - a_pip))" -v q="$((b_peer - a_peer))" 'BEGIN {
    printf "idle, %d s: pipcompose %.2f %% of a core, plain gst-rtsp-server %.2f %%\n", s, p / t / s * 100, q / t / s * 100 }'

# Joins: each probe reads 2 s and leaves; the next comes once the stream is idle again (3 s later).
for i in $(seq 1 "$JOINS"); do
    for who in pip peer; do
        url="rtsp://127.0.0.1:$([ "$who" = pip ] && echo "$PORT_PIP/pip" || echo "$PORT_PEER/peer")"
        "$BIN" probe "$url" --duration 2 --json --quiet >"$OUT/$who.$i.json" 2>/dev/null || true
        python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['total']; print(sys.argv[2], round(t.get('joinMs') or -1, 1), t.get('frames'))" \
            "$OUT/$who.$i.json" "$who"
        sleep 3
    done
done | tee "$OUT/joins"
awk '{ v[$1] = v[$1] " " $2; s[$1] += $2; n[$1]++ } END {
    for (w in v) printf "%s: first frame after joining, ms:%s (mean %.0f)\n", (w == "pip" ? "pipcompose" : "gst-rtsp-server"), v[w], s[w] / n[w] }' "$OUT/joins"
stop_source
