#!/usr/bin/env bash
# Where pipcompose's WHEP server spends its CPU with N viewers (issue 49: "if pipcompose's own WHEP sending limits the
# count before the receivers do, say so with the profile"). A fresh `pipcompose run --webrtc` of one 1280x720@30
# timecode stream, `pipcompose soak --viewers-only whep+…/v1/whep --viewers N --decode 0` watching it; once every
# viewer has connected, `perf record -F 499 -g` of the server alone for SECONDS. Prints the server's CPU over that
# window, its share by library (perf's dso) and by thread name (comm), and the top symbols.
# Usage: bash bench/whep_server_profile.sh [VIEWERS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
N="${1:-100}"; SECS="${2:-15}"
command -v perf >/dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
OUT="$(mktemp -d)"
PID=""; SOAK=""
cleanup() {
    [ -n "$SOAK" ] && kill -INT "$SOAK" 2>/dev/null && wait "$SOAK" 2>/dev/null || true
    [ -n "$PID" ] && kill -INT "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
    rm -rf "$OUT"
}
trap cleanup EXIT
if [ -z "${BIN:-}" ]; then release_binary; fi
TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
CPORT=$(free_port)
"$BIN" run examples/timecode.yaml --size 1280x720 --fps 30 --webrtc --webrtc-max-viewers 1000 \
    --control "127.0.0.1:$CPORT" --control-token "$TOKEN" --rtsp "127.0.0.1:$(free_port)/pip" >"$OUT/run.log" 2>&1 &
PID=$!
wait_for_line "$OUT/run.log" "^serving " "$PID" "pipcompose did not start"
PIPCOMPOSE_WHEP_TOKEN="$TOKEN" "$BIN" soak --viewers-only "whep+http://127.0.0.1:$CPORT/v1/whep" --viewers "$N" \
    --decode 0 --duration "$((SECS + 60))" --report "$OUT/soak" >"$OUT/soak.log" 2>&1 &
SOAK=$!
connected=0
for _ in $(seq 1 600); do
    connected=$(curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$CPORT/v1/status" \
        | python3 -c 'import json,sys; print(json.load(sys.stdin).get("webrtc",{}).get("connected",0))' 2>/dev/null || echo 0)
    [ "$connected" -ge "$N" ] && break
    kill -0 "$SOAK" 2>/dev/null || { echo "the soak ended early:" >&2; tail -5 "$OUT/soak.log" >&2; exit 1; }
    sleep 0.1
done
[ "$connected" -ge "$N" ] || { echo "only $connected of $N viewers connected" >&2; exit 1; }
TICK=$(getconf CLK_TCK)
c0=$(ticks "$PID")
perf record -q -F 499 -g -p "$PID" -o "$OUT/perf.data" -- sleep "$SECS" 2>/dev/null
c1=$(ticks "$PID")
echo "{\"bench\": \"whep-server-profile\", \"viewers\": $N, \"seconds\": $SECS, \"serverCpuSeconds\": $(python3 -c "print(round(($c1 - $c0) / $TICK, 2))")}"
echo "--- by library (dso), % of the server's samples"
perf report -i "$OUT/perf.data" --no-children --sort dso --stdio -q -g none 2>/dev/null | grep -v '^$' | head -15
echo "--- by thread name (comm)"
perf report -i "$OUT/perf.data" --no-children --sort comm --stdio -q -g none 2>/dev/null | grep -v '^$' | head -15
echo "--- top symbols"
perf report -i "$OUT/perf.data" --no-children --sort dso,sym --stdio -q -g none 2>/dev/null | grep -v '^$' | head -25
