#!/usr/bin/env bash
# Is the latency a WHEP swarm's sample reads the latency a viewer sees? (issue 49: "the sampled latency within a
# bucket of a fully decoding probe's".) For each viewer count N, a fresh `pipcompose run --webrtc` of one 1280x720@30
# timecode stream is read at the same moments by
#   the swarm:  pipcompose soak --viewers-only whep+…/v1/whep --viewers N --decode K (K decode at a time, in turn);
#   the probe:  pipcompose probe whep+…/v1/whep, one more WebRTC viewer that decodes every frame for the whole time.
# Both read the strip of the same frames on the same clock. Reported per round: both p50 and p99, the buckets (the
# ones every probe and soak exports, docs/MEASURE.md) the p50s fall in, and whether they are within a bucket's width.
# Usage: bash bench/whep_sampled.sh [SECONDS] [DECODE] [ROUNDS] [VIEWER COUNTS…]   — prints JSON lines.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-30}"; shift || true
DECODE="${1:-2}"; shift || true
ROUNDS="${1:-3}"; shift || true
if [ $# -gt 0 ]; then COUNTS=("$@"); else COUNTS=(20 50 100); fi
server_bench_setup

for n in "${COUNTS[@]}"; do
    for round in $(seq 1 "$ROUNDS"); do
        CPORT=$(free_port)
        # (Removed first: the new run's log is made by its own shell, and the last round's "serving" would do.)
        rm -f "$OUT/run.log"
        "$BIN" run examples/timecode.yaml --size 1280x720 --fps 30 --webrtc --webrtc-max-viewers 1000 \
            --control "127.0.0.1:$CPORT" --control-token "$TOKEN" --rtsp "127.0.0.1:$(free_port)/pip" >"$OUT/run.log" 2>&1 &
        PID=$!
        wait_for_line "$OUT/run.log" "^serving " "$PID" "pipcompose did not start"
        export PIPCOMPOSE_WHEP_TOKEN="$TOKEN"
        rm -rf "$OUT/soak" "$OUT/probe.json"
        # The swarm joins first; the probe once every viewer of it has connected, so both read the
        # same stretch under the same load (status counts the connected sessions).
        "$BIN" soak --viewers-only "whep+http://127.0.0.1:$CPORT/v1/whep" --viewers "$n" --decode "$DECODE" \
            --duration "$((SECS + 15))" --report "$OUT/soak" >"$OUT/soak.log" 2>&1 &
        SOAK=$!
        for _ in $(seq 1 600); do
            seen=$(curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$CPORT/v1/status" \
                   | python3 -c 'import json,sys; print(json.load(sys.stdin).get("webrtc",{}).get("connected",0))' 2>/dev/null || echo 0)
            [ "$seen" -ge "$n" ] && break
            kill -0 "$SOAK" 2>/dev/null || break
            sleep 0.1
        done
        "$BIN" probe "whep+http://127.0.0.1:$CPORT/v1/whep" --duration "$SECS" --json --quiet >"$OUT/probe.json" || true
        wait "$SOAK" || true
        stop_server
        [ -s "$OUT/soak/soak.json" ] || { echo "the swarm wrote no report:" >&2; tail -n 5 "$OUT/soak.log" "$OUT/run.log" >&2; exit 1; }
        python3 - "$OUT/soak/soak.json" "$OUT/probe.json" "$n" "$DECODE" "$round" <<'PY'
import bisect, json, sys
bounds = [0.5, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 33, 50, 75, 100, 150, 250, 500, 1000, 2500, 5000, 10000]
def bucket(ms):
    if ms is None: return None
    i = bisect.bisect_left(bounds, ms)
    return f"{bounds[i-1] if i else 0}-{bounds[i] if i < len(bounds) else 'inf'} ms"
s = json.load(open(sys.argv[1]))["totals"]
p = json.load(open(sys.argv[2]))["total"]
lat = p.get("latencyMs", {})
n, k, rnd = (int(x) for x in sys.argv[3:6])
row = {"bench": "whep-sampled-latency", "viewers": n, "decoding": k, "round": rnd,
       "sampledP50Ms": s.get("latencyP50"), "sampledP99Ms": s.get("latencyP99"),
       "probeP50Ms": round(lat["p50"], 2) if "p50" in lat else None, "probeP99Ms": round(lat["p99"], 2) if "p99" in lat else None,
       "probeFrames": p.get("frames"), "probeDropped": p.get("dropped"), "swarmStalls": s.get("stalls")}
row["sampledP50Bucket"], row["probeP50Bucket"] = bucket(row["sampledP50Ms"]), bucket(row["probeP50Ms"])
def width(ms):
    i = bisect.bisect_left(bounds, ms)
    return (bounds[i] if i < len(bounds) else float("inf")) - (bounds[i - 1] if i else 0)
if row["sampledP50Ms"] is not None and row["probeP50Ms"] is not None:
    row["p50DiffMs"] = round(row["sampledP50Ms"] - row["probeP50Ms"], 2)
    # Within a bucket: no farther apart than the width of the bucket the probe's p50 is in.
    row["p50WithinABucket"] = abs(row["p50DiffMs"]) <= width(row["probeP50Ms"])
print(json.dumps(row))
PY
    done
done
