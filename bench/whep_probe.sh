#!/usr/bin/env bash
# Latency of one 1280x720@30 stream read three ways at the same moments, each round against a fresh
# `pipcompose run --webrtc`: `probe whep+http://…/v1/whep` (WebRTC through webrtcbin, decoded as it arrives),
# `probe rtsp://…` (TCP, no jitter buffer) and headless Chromium playing the live page (Tests/Fixtures/web_viewer.py:
# render → frame shown, the browser's own jitter buffer). All three read the same timecode strip.
# Usage: bash bench/whep_probe.sh [SECONDS] [ROUNDS]   — prints JSON lines.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-20}"
ROUNDS="${2:-3}"
server_bench_setup

for round in $(seq 1 "$ROUNDS"); do
    CPORT=$(free_port)
    rm -f "$OUT/run.log"
    "$BIN" run examples/timecode.yaml --size 1280x720 --fps 30 --webrtc --control "127.0.0.1:$CPORT" \
        --control-token "$TOKEN" --rtsp "127.0.0.1:$(free_port)/pip" >"$OUT/run.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 300); do grep -qs "^serving " "$OUT/run.log" && break; sleep 0.1; done
    RTSP=$(sed -n 's/^serving //p' "$OUT/run.log" | head -1)
    PIPCOMPOSE_WHEP_TOKEN="$TOKEN" "$BIN" probe "whep+http://127.0.0.1:$CPORT/v1/whep" --duration "$SECS" --json --quiet >"$OUT/whep.json" &
    W=$!
    "$BIN" probe "$RTSP" --duration "$SECS" --json --quiet >"$OUT/rtsp.json" &
    R=$!
    /usr/bin/python3 Tests/Fixtures/web_viewer.py "http://127.0.0.1:$CPORT/?token=$TOKEN" --seconds "$SECS" --timeout 60 >"$OUT/browser.json" || true
    wait "$W" "$R" || true
    stop_server
    python3 - "$OUT" "$round" <<'PY'
import json, sys
out, rnd = sys.argv[1], int(sys.argv[2])
def probe(name):
    try:
        t = json.load(open(f"{out}/{name}.json"))["total"]
    except Exception as e:
        return {"error": repr(e)}
    l = t.get("latencyMs") or {}
    return {"p50": l.get("p50"), "p99": l.get("p99"), "frames": t["frames"], "dropped": t["dropped"],
            "joinMs": t.get("joinMs")}
try:
    b = json.loads([l for l in open(f"{out}/browser.json") if l.startswith("{")][-1]).get("stats", {})
    browser = {"p50": b.get("p50"), "p99": b.get("p99"), "frames": b.get("frames"), "dropped": b.get("dropped")}
except Exception as e:
    browser = {"error": repr(e)}
print(json.dumps({"bench": "whep-probe-latency", "round": rnd, "whep": probe("whep"), "rtsp": probe("rtsp"),
                  "browser": browser}))
PY
done
