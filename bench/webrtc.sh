#!/usr/bin/env bash
# WebRTC to browsers, measured: (1) glass-to-glass latency in headless Chromium on loopback — the live page reads
# the timecode strip of each frame the browser shows (render → displayed, jitter buffer target 0); (2) resize
# request → first frame at the new size shown in the page ("follow this window" with a new element size); (3) the
# most WebRTC viewers of one 1280x720@30 stream with 0 stalls (bench/whep_viewers.py: webrtcbin receivers that count
# frames (access units out of a depayloader) without decoding, joining 0.1 s apart; a stall is 500 ms without a
# frame), with pipcompose's CPU and the receivers' own.
# Peer for (1): the same page reading the same strip is what a browser shows; bench/glass.sh gives the RTSP path.
# Peer for (3): bench/whep_peer.py, plain GStreamer webrtcbin fan-out of one x264 stream, same viewers.
# Usage: bash bench/webrtc.sh [SECONDS] [VIEWER COUNTS…]   — prints JSON lines.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-30}"; shift || true
if [ $# -gt 0 ]; then COUNTS=("$@"); else COUNTS=(10 25 50); fi
OUT="$(mktemp -d)"
trap 'stop_webrtc; rm -rf "$OUT"' EXIT
release_binary
TICK=$(getconf CLK_TCK)

PID=""
# The control API wants a token; the bench gives its own so that every client here can send it.
TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
start_webrtc() {
    CPORT=$(free_port)
    # A fresh log: the previous run's "serving" line must not answer for this one.
    rm -f "$OUT/run.log"
    "$BIN" run examples/timecode.yaml --size 1280x720 --fps 30 --webrtc --webrtc-max-viewers 500 \
        --control "127.0.0.1:$CPORT" --control-token "$TOKEN" --rtsp "127.0.0.1:$(free_port)/pip" >"$OUT/run.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 300); do
        if grep -qs "^serving " "$OUT/run.log"; then
            RTSP_URL=$(sed -n 's/^serving //p' "$OUT/run.log" | head -1)
            return 0
        fi
        sleep 0.1
    done
    echo "pipcompose did not start:" >&2; tail -5 "$OUT/run.log" >&2; return 1
}
stop_webrtc() { [ -n "$PID" ] && kill -INT "$PID" 2>/dev/null && wait "$PID" || true; PID=""; }

start_webrtc
BASE="http://127.0.0.1:$CPORT"
# (1) and (2): one browser, SECS seconds, then a resize to 640x360 through the page.
/usr/bin/python3 Tests/Fixtures/web_viewer.py "$BASE/?token=$TOKEN" --seconds "$SECS" --resize 640x360 --timeout 60 >"$OUT/browser.json"
python3 - "$OUT/browser.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
s = b.get("stats", {})
print(json.dumps({"bench": "webrtc-browser", "seconds": b.get("currentTime"), "frames": s.get("frames"),
                  "readable": s.get("readable"), "dropped": s.get("dropped"), "latencyP50Ms": s.get("p50"),
                  "latencyP99Ms": s.get("p99"), "fps": s.get("fps"), "resizeToShownSeconds": b.get("resizeSeconds"),
                  "error": b.get("error")}))
PY
stop_webrtc

# (3): N viewers at once, each count on a fresh process.
for n in "${COUNTS[@]}"; do
    start_webrtc
    BASE="http://127.0.0.1:$CPORT"
    c0=$(ticks "$PID")
    /usr/bin/python3 bench/whep_viewers.py "$BASE" "$n" 20 --stagger 0.1 --token "$TOKEN" >"$OUT/viewers.json" \
        || { echo "the viewers failed; pipcompose said:" >&2; tail -20 "$OUT/run.log" >&2; exit 1; }
    c1=$(ticks "$PID")
    python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen(urllib.request.Request('$BASE/v1/status', headers={'Authorization': 'Bearer $TOKEN'})).read().decode())" >"$OUT/status.json"
    stop_webrtc
    python3 - "$OUT/viewers.json" "$OUT/status.json" "$c0" "$c1" "$TICK" "$n" <<'PY'
import json, sys
v = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
c0, c1, tick, n = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
out = {"bench": "webrtc-viewers", "viewers": n, **{k: v[k] for k in ("connected", "refused", "stalls", "viewersWithStalls",
       "longestGapMs", "framesMin", "framesMax", "framesTotal", "receiverCpuSeconds")},
       "pipcomposeCpuSeconds": round((c1 - c0) / tick, 2),
       "sourceDropped": s.get("dropped"), "webrtcOutputDropped": next((o["dropped"] for o in s.get("outputs", []) if o["id"] == "webrtc"), None)}
print(json.dumps(out))
PY
    # The peer, same viewers: plain webrtcbin fan-out in Python (bench/whep_peer.py) of the very stream a fresh
    # pipcompose encodes, read over RTSP (the same bits, so the same packets per viewer); pipcompose's CPU meanwhile is
    # its encoding without WebRTC viewers.
    start_webrtc
    PPORT=$(free_port)
    /usr/bin/python3 bench/whep_peer.py "$PPORT" --rtsp "$RTSP_URL" >"$OUT/peer.log" 2>&1 &
    PEER=$!
    for _ in $(seq 1 100); do grep -qs "^ready" "$OUT/peer.log" && break; sleep 0.1; done
    p0=$(ticks "$PEER"); e0=$(ticks "$PID")
    /usr/bin/python3 bench/whep_viewers.py "http://127.0.0.1:$PPORT" "$n" 20 --stagger 0.1 >"$OUT/viewers.json"
    p1=$(ticks "$PEER"); e1=$(ticks "$PID")
    kill "$PEER"; wait "$PEER" 2>/dev/null || true
    stop_webrtc
    python3 - "$OUT/viewers.json" "$p0" "$p1" "$TICK" "$n" "$e0" "$e1" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
p0, p1, tick, n, e0, e1 = (int(x) for x in sys.argv[2:8])
print(json.dumps({"bench": "webrtc-viewers-peer", "viewers": n, **{k: v[k] for k in ("connected", "refused", "stalls",
       "viewersWithStalls", "longestGapMs", "framesMin", "framesMax", "framesTotal", "receiverCpuSeconds")},
       "peerCpuSeconds": round((p1 - p0) / tick, 2), "pipcomposeEncodingOnlyCpuSeconds": round((e1 - e0) / tick, 2)}))
PY
done
