#!/usr/bin/env bash
# Latency by transport, pipcompose beside plain gst-rtsp-server: the timecode scene at SIZE@FPS served by
# `pipcompose run --rtsp`, and the same strip served by bench/rtsp_peer_strip.py (gst-rtsp-server alone, one
# shared live media, pipcompose's x264 settings). Each is read by one `pipcompose probe` over TCP, then over UDP,
# for SECS seconds, ROUNDS times; a fresh server for each probe, so each probe's first frame is a join.
# Prints a JSON line per probe: p50/p95/p99/max, the worst second against the median of the seconds' worst, the
# number of seconds whose worst frame was over 3 times the median, and the first frame's latency after PLAY.
# Usage: bash bench/transport_latency.sh [SIZE] [FPS] [SECS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SIZE="${1:-1280x720}"; FPS="${2:-30}"; SECS="${3:-30}"; ROUNDS="${4:-1}"
OUT="$(mktemp -d)"
PEER=""
trap 'stop_source; [ -n "$PEER" ] && kill "$PEER" 2>/dev/null; rm -rf "$OUT"' EXIT
release_binary
BITRATE=$(python3 -c "w,h='$SIZE'.split('x'); print(round(int(w)*int(h)*$FPS*0.09/1000))")

summary() { # WHO TRANSPORT ROUND JSON
    python3 - "$@" <<'PY'
import json, sys
who, transport, rnd, path = sys.argv[1:5]
r = json.load(open(path))
t = r["total"]; l = t.get("latencyMs") or {}
worst = [s["latencyMs"]["max"] for s in r["seconds"] if s.get("latencyMs")]
typical = sorted(worst)[len(worst) // 2] if worst else 0
print(json.dumps({"bench": "transport-latency", "server": who, "transport": transport, "round": int(rnd),
                  "frames": t["frames"], "dropped": t["dropped"],
                  "p50": l.get("p50"), "p95": l.get("p95"), "p99": l.get("p99"), "max": l.get("max"),
                  "firstFrameMs": round(t.get("firstFrameLatencyMs") or 0, 1), "joinMs": round(t.get("joinMs") or 0, 1),
                  "worstSecondMs": round(max(worst), 1) if worst else None,
                  "typicalSecondMs": round(typical, 1),
                  "secondsOver3xMedian": sum(1 for w in worst if l.get("p50") and w > 3 * l["p50"]),
                  "perSecondMax": [round(w, 1) for w in worst]}))
PY
}

cat >"$OUT/scene.yaml" <<'YAML'
widgets:
  - id: strip
    type: timecode
    place: {edge: top, size: 0.12}
YAML

for round in $(seq 1 "$ROUNDS"); do
    for transport in tcp udp; do
        PORT=$(free_port)
        start_source "$OUT/source.log" "$OUT/scene.yaml" --size "$SIZE" --fps "$FPS" --rtsp "127.0.0.1:$PORT/pip"
        "$BIN" probe "rtsp://127.0.0.1:$PORT/pip" --transport "$transport" --duration "$SECS" --json --quiet \
            >"$OUT/pip.json" 2>/dev/null || true
        stop_source
        summary pipcompose "$transport" "$round" "$OUT/pip.json"

        PORT=$(free_port)
        /usr/bin/python3 bench/rtsp_peer_strip.py "$PORT" "$SIZE" "$FPS" "$BITRATE" >"$OUT/peer.log" 2>&1 &
        PEER=$!
        for _ in $(seq 1 100); do grep -q serving "$OUT/peer.log" && break; sleep 0.1; done
        "$BIN" probe "rtsp://127.0.0.1:$PORT/pip" --transport "$transport" --duration "$SECS" --json --quiet \
            >"$OUT/peer.json" 2>/dev/null || true
        kill "$PEER"; wait "$PEER" 2>/dev/null || true; PEER=""
        summary gst-rtsp-server "$transport" "$round" "$OUT/peer.json"
    done
done
