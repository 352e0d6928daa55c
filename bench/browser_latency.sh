#!/usr/bin/env bash
# Glass to glass in a browser, run after run: RUNS times, a fresh `pipcompose run --webrtc` (the timecode scene at
# 1280x720@30) and a fresh headless Chromium on its live page for SECS seconds; the page reads the strip of each frame
# it shows (render → displayed). Whether a session's latency is decided at its start shows as a spread between runs
# much wider than the spread within one. Prints a JSON line per run, then one with the spread of the runs' medians.
# Usage: bash bench/browser_latency.sh [RUNS] [SECS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
RUNS="${1:-5}"; SECS="${2:-5}"
OUT="$(mktemp -d)"
PID=""
trap '[ -n "$PID" ] && kill -INT "$PID" 2>/dev/null; rm -rf "$OUT"' EXIT
release_binary
TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
for run in $(seq 1 "$RUNS"); do
    CPORT=$(free_port)
    rm -f "$OUT/run.log"
    "$BIN" run examples/timecode.yaml --size 1280x720 --fps 30 --webrtc --control "127.0.0.1:$CPORT" \
        --control-token "$TOKEN" --rtsp "127.0.0.1:$(free_port)/pip" >"$OUT/run.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 300); do grep -qs "^serving " "$OUT/run.log" && break; sleep 0.1; done
    /usr/bin/python3 Tests/Fixtures/web_viewer.py "http://127.0.0.1:$CPORT/?token=$TOKEN" --seconds "$SECS" \
        --timeout 60 >"$OUT/browser.$run.json" || true
    kill -INT "$PID"; wait "$PID" || true; PID=""
    python3 - "$OUT/browser.$run.json" "$run" <<'PY'
import json, sys
b = json.load(open(sys.argv[1])); s = b.get("stats", {})
print(json.dumps({"bench": "browser-latency", "run": int(sys.argv[2]), "frames": s.get("frames"),
                  "p50Ms": s.get("p50"), "p99Ms": s.get("p99"), "fps": s.get("fps"), "partsMs": s.get("parts"),
                  "error": b.get("error")}))
PY
done | tee "$OUT/runs.jsonl"
python3 - "$OUT/runs.jsonl" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
p50 = [r["p50Ms"] for r in runs if r.get("p50Ms") is not None]
p99 = [r["p99Ms"] for r in runs if r.get("p99Ms") is not None]
print(json.dumps({"bench": "browser-latency-runs", "runs": len(runs), "p50s": p50, "p99s": p99,
                  "p50Spread": round(max(p50) - min(p50), 1) if p50 else None, "worstP99": max(p99) if p99 else None}))
PY
