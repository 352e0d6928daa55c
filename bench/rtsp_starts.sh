#!/usr/bin/env bash
# Viewers starting a fresh media together: N times, a just-started pipcompose (timecode scene with --audio ticks,
# 640x360@30) gets a UDP and a TCP `pipcompose probe --av` at once for 4 s. Counts the starts where a probe got no
# picture or under a second of sound, and the probes whose sound had a hole. A race counter, not a timing:
# it found gst-rtsp-server 1.22's sink deadlock, the probe's pad-linking race and the held first packet.
# Peer, same run: plain gst-rtsp-server (Python, test-launch style) serving a live videotestsrc + audiotestsrc,
# read the same way (no ticks there, so only picture, sound length and holes count).
# Usage: bash bench/rtsp_starts.sh [STARTS]   — prints one JSON line.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
N="${1:-20}"
OUT="$(mktemp -d)"
trap 'stop_source; [ -n "${PEER:-}" ] && kill "$PEER" 2>/dev/null; rm -rf "$OUT"' EXIT
release_binary
cat >"$OUT/scene.yaml" <<'YAML'
size: 640x360
fps: 30
widgets:
  - id: strip
    type: timecode
    place: {edge: top, size: 0.12}
YAML

pair() { # URL PREFIX: one UDP and one TCP probe at once
    "$BIN" probe "$1" --av --transport udp --duration 4 --json --quiet >"$2.udp.json" 2>/dev/null &
    local a=$!
    "$BIN" probe "$1" --av --transport tcp --duration 4 --json --quiet >"$2.tcp.json" 2>/dev/null &
    local b=$!
    wait $a $b || true
}

for i in $(seq 1 "$N"); do
    PORT=$(free_port)
    start_source "$OUT/source.log" "$OUT/scene.yaml" --audio ticks --rtsp "127.0.0.1:$PORT/pip"
    pair "rtsp://127.0.0.1:$PORT/pip" "$OUT/pip.$i"
    stop_source
done

# The peer: gst-rtsp-server alone, one shared live media, started afresh each time.
for i in $(seq 1 "$N"); do
    PORT=$(free_port)
    /usr/bin/python3 - "$PORT" >"$OUT/peer.log" 2>&1 <<'PY' &
import sys, gi
gi.require_version("Gst", "1.0"); gi.require_version("GstRtspServer", "1.0")
from gi.repository import Gst, GstRtspServer, GLib
Gst.init(None)
s = GstRtspServer.RTSPServer(); s.set_address("127.0.0.1"); s.set_service(sys.argv[1])
f = GstRtspServer.RTSPMediaFactory(); f.set_shared(True)
f.set_launch("( videotestsrc is-live=true ! video/x-raw,width=640,height=360,framerate=30/1 ! "
             "x264enc tune=zerolatency speed-preset=ultrafast key-int-max=30 ! rtph264pay name=pay0 pt=96 "
             "audiotestsrc is-live=true wave=ticks ! audioconvert ! avenc_aac ! rtpmp4gpay name=pay1 pt=97 )")
s.get_mount_points().add_factory("/pip", f); s.attach(None)
print("serving", flush=True)
GLib.MainLoop().run()
PY
    PEER=$!
    for _ in $(seq 1 100); do grep -q serving "$OUT/peer.log" && break; sleep 0.1; done
    pair "rtsp://127.0.0.1:$PORT/pip" "$OUT/peer.$i"
    kill "$PEER"; wait "$PEER" 2>/dev/null || true; PEER=""
done

python3 - "$OUT" "$N" <<'PY'
import json, sys, glob
out, n = sys.argv[1], int(sys.argv[2])
def tally(who):
    failed, holes = 0, 0
    for i in range(1, n + 1):
        bad = False
        for t in ("udp", "tcp"):
            try:
                j = json.load(open(f"{out}/{who}.{i}.{t}.json"))
            except (OSError, ValueError):
                bad = True
                continue
            av = j.get("av") or {}
            if j["total"]["frames"] < 30 or av.get("heardSeconds", 0) < 1:
                bad = True
            holes += 1 if av.get("gaps", 0) > 0 else 0
        failed += bad
    return {"starts": n, "failed": failed, "probesWithAHole": holes}
print(json.dumps({"bench": "rtsp_starts", "pipcompose": tally("pip"), "gst-rtsp-server": tally("peer")}))
PY
