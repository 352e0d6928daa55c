#!/usr/bin/env bash
# WHEP viewers on one machine, pipcompose's instrument against plain webrtcbin receivers, beside the same server: a
# fresh `pipcompose run --webrtc` of one 1280x720@30 timecode stream for each count, then
#   plain:  bench/whep_viewers.py N (webrtcbin receivers in one Python process that count frames, access units out of
#           a depayloader, without decoding; joining 0.1 s apart);
#   ours:   pipcompose soak --viewers-only whep+…/v1/whep --viewers N --decode K (K viewers decode and read the strip
#           and the picture; the others account for every frame by its RTP timestamp, without decoding).
# A stall is 500 ms without a frame, for both. Reported per count: stalls, viewers with frames, frames, drops (ours:
# exact, by timestamp), the receivers' CPU and pipcompose's (the server) over the same window.
# Usage: bash bench/whep_swarm.sh [SECONDS] [DECODE] [VIEWER COUNTS…]   — prints JSON lines.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-20}"; shift || true
DECODE="${1:-2}"; shift || true
if [ $# -gt 0 ]; then COUNTS=("$@"); else COUNTS=(50 75 100 150); fi
server_bench_setup
TICK=$(getconf CLK_TCK)

start_server() {
    CPORT=$(free_port)
    rm -f "$OUT/run.log"
    "$BIN" run examples/timecode.yaml --size 1280x720 --fps 30 --webrtc --webrtc-max-viewers 1000 \
        --control "127.0.0.1:$CPORT" --control-token "$TOKEN" --rtsp "127.0.0.1:$(free_port)/pip" >"$OUT/run.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 300); do grep -qs "^serving " "$OUT/run.log" && return 0; sleep 0.1; done
    echo "pipcompose did not start:" >&2; tail -5 "$OUT/run.log" >&2; return 1
}

for n in "${COUNTS[@]}"; do
    # Plain webrtcbin receivers.
    start_server
    c0=$(ticks "$PID")
    /usr/bin/python3 bench/whep_viewers.py "http://127.0.0.1:$CPORT" "$n" "$SECS" --stagger 0.1 --token "$TOKEN" >"$OUT/plain.json" \
        || { echo "the plain receivers failed; pipcompose said:" >&2; tail -20 "$OUT/run.log" >&2; exit 1; }
    c1=$(ticks "$PID")
    stop_server
    python3 - "$OUT/plain.json" "$c0" "$c1" "$TICK" "$n" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
c0, c1, tick, n = (int(x) for x in sys.argv[2:6])
print(json.dumps({"bench": "whep-swarm-plain-webrtcbin", "viewers": n, **{k: v[k] for k in ("connected", "stalls",
      "viewersWithStalls", "longestGapMs", "framesMin", "framesTotal", "receiverCpuSeconds")},
      "serverCpuSeconds": round((c1 - c0) / tick, 2)}))
PY
    # pipcompose's swarm, the same server afresh.
    start_server
    c0=$(ticks "$PID")
    status=0
    PIPCOMPOSE_WHEP_TOKEN="$TOKEN" /usr/bin/time -f "%U %S" -o "$OUT/time" "$BIN" soak --viewers-only "whep+http://127.0.0.1:$CPORT/v1/whep" \
        --viewers "$n" --decode "$DECODE" --duration "$SECS" --report "$OUT/soak" >"$OUT/soak.log" 2>&1 || status=$?
    c1=$(ticks "$PID")
    stop_server
    python3 - "$OUT/soak/soak.json" "$OUT/time" "$c0" "$c1" "$TICK" "$n" "$DECODE" "$status" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
user, system = (float(x) for x in open(sys.argv[2]).read().split()[-2:])
c0, c1, tick, n, decode, status = (int(x) for x in sys.argv[3:9])
t = r["totals"]
viewers = r["viewers"]
print(json.dumps({"bench": "whep-swarm-pipcompose", "viewers": n, "decoding": decode, "exit": status,
      "viewersWithFrames": sum(1 for v in viewers if v["total"]["frames"] > 0), "stalls": t.get("stalls"),
      "viewersWithStalls": sum(1 for v in viewers if v["total"].get("stalls", 0) > 0),
      "longestGapMs": round(max((v["total"].get("longestGapMs", 0) for v in viewers), default=0), 1),
      "framesMin": min((v["total"]["frames"] for v in viewers), default=0), "framesTotal": t["viewerFrames"],
      "dropped": t["viewerDropped"], "repeated": t["viewerRepeated"], "unreadable": t["unreadable"],
      "latencyP50Ms": t.get("latencyP50"), "latencyP99Ms": t.get("latencyP99"),
      "receiverCpuSeconds": round(user + system, 2), "serverCpuSeconds": round((c1 - c0) / tick, 2)}))
PY
done

# What one viewer costs the instrument: 20 accounting viewers, then 4 decoding ones, each against a fresh server,
# the soak's whole process (joining and leaving included) over SECS seconds of watching.
for spec in "20 0" "4 4"; do
    set -- $spec
    start_server
    PIPCOMPOSE_WHEP_TOKEN="$TOKEN" /usr/bin/time -f "%U %S" -o "$OUT/time" "$BIN" soak --viewers-only "whep+http://127.0.0.1:$CPORT/v1/whep" \
        --viewers "$1" --decode "$2" --duration "$SECS" --report "$OUT/soak" >"$OUT/soak.log" 2>&1 || true
    stop_server
    python3 - "$OUT/time" "$1" "$2" "$SECS" <<'PY'
import json, sys
user, system = (float(x) for x in open(sys.argv[1]).read().split()[-2:])
n, decode, secs = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
print(json.dumps({"bench": "whep-viewer-cost", "viewers": n, "decoding": decode, "cpuSeconds": round(user + system, 2),
                  "coreSharePerViewer": round((user + system) / secs / n, 4)}))
PY
done
