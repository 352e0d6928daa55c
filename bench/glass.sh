#!/usr/bin/env bash
# Glass-to-glass latency: pipcompose renders 1280x720@30 with a timecode strip and serves RTSP; `pipcompose
# probe` (jitter buffer 0, no display sync) decodes it over TCP and over UDP and reads render → decoded time
# from every frame. Peer, same run: a hand-built GStreamer pipeline (videotestsrc → x264 zerolatency → RTP
# pay/depay → avdec_h264) timed by GStreamer's own latency tracer, source to sink, in one process.
# Usage: bash bench/glass.sh [SECONDS] [WxH]   — prints one JSON line.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-30}"; SIZE="${2:-1280x720}"; FPS=30
W="${SIZE%x*}"; H="${SIZE#*x}"
OUT="$(mktemp -d)"
trap 'stop_source; rm -rf "$OUT"' EXIT
release_binary
PORT=$(free_port)
start_source "$OUT/source.log" examples/timecode.yaml --size "$SIZE" --fps $FPS --rtsp "127.0.0.1:$PORT/pip" \
    --duration $((SECS * 2 + 30))
URL="rtsp://127.0.0.1:$PORT/pip"
"$BIN" probe "$URL" --transport tcp --duration "$SECS" --quiet --report "$OUT/tcp.json" >/dev/null
"$BIN" probe "$URL" --transport udp --duration "$SECS" --quiet --report "$OUT/udp.json" >/dev/null
stop_source

# The peer: the latency tracer's per-buffer source → sink time.
GST_TRACERS="latency" GST_DEBUG_NO_COLOR=1 GST_DEBUG="GST_TRACER:7" gst-launch-1.0 -q videotestsrc is-live=true \
    num-buffers=$((SECS * FPS)) ! "video/x-raw,format=I420,width=$W,height=$H,framerate=$FPS/1" \
    ! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=$FPS ! rtph264pay config-interval=-1 \
    ! rtph264depay ! avdec_h264 ! videoconvert ! fakesink sync=false 2>&1 \
    | grep -E "latency, src.*time=\(guint64\)[0-9]+" | sed -E 's/.*time=\(guint64\)([0-9]+).*/\1/' >"$OUT/peer.txt"

python3 - "$OUT" "$SIZE" "$SECS" <<'PY'
import json, sys
out, size, secs = sys.argv[1], sys.argv[2], sys.argv[3]
res = {"bench": "glass", "size": size, "seconds": int(secs)}
for t in ("tcp", "udp"):
    tot = json.load(open(f"{out}/{t}.json"))["total"]
    res[t] = {"latencyMs": tot.get("latencyMs"), "frames": tot["frames"], "dropped": tot["dropped"],
              "unreadable": tot["unreadable"]}
v = sorted(int(x) / 1e6 for x in open(f"{out}/peer.txt") if x.strip())
pct = lambda p: v[min(len(v) - 1, max(0, int(p * len(v) + 0.999) - 1))]
res["peer"] = {"p50": pct(0.5), "p99": pct(0.99), "max": v[-1], "mean": sum(v) / len(v), "samples": len(v)}
print(json.dumps(res))
PY
