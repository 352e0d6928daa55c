#!/usr/bin/env bash
# What `probe --metrics` costs: two probes of one 1280x720@30 RTSP stream side by side for SECONDS, one serving its
# figures to a real Prometheus (Debian's, scraping it every second with the token, as deploy/prometheus does every
# 15 s), the other not; their CPU (user + system, from /proc) over the same window. ROUNDS rounds, the probes
# started in alternating order. Prints one JSON line a round and the ratio of the sums.
# Usage: bash bench/metrics_cost.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-60}"; ROUNDS="${2:-3}"
OUT="$(mktemp -d)"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; stop_source; rm -rf "$OUT"' EXIT
release_binary
TICK=$(getconf CLK_TCK)
start_source "$OUT/run.log" examples/timecode.yaml --size 1280x720 --fps 30 --rtsp "127.0.0.1:$(free_port)/pip"
URL=$(sed -n 's/^serving //p' "$OUT/run.log" | head -1)
# query EXPR: the sum of an instant query's values from the round's Prometheus ("" when it has none).
query() {
    python3 - "http://127.0.0.1:$PPORT/api/v1/query" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
try:
    r = json.load(urllib.request.urlopen(sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2]}), timeout=5))
    v = r["data"]["result"]
    print(int(sum(float(x["value"][1]) for x in v)) if v else "")
except OSError:
    print("")
PY
}
TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
printf '%s' "$TOKEN" >"$OUT/token"
with=0; without=0
for round in $(seq 1 "$ROUNDS"); do
    MPORT=$(free_port); PPORT=$(free_port)
    cat >"$OUT/prometheus.yml" <<YML
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: probe
    authorization: {type: Bearer, credentials_file: $OUT/token}
    static_configs: [{targets: ["127.0.0.1:$MPORT"]}]
YML
    rm -rf "$OUT/data"
    /usr/bin/prometheus --config.file="$OUT/prometheus.yml" --storage.tsdb.path="$OUT/data" \
        --web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$OUT/prom.log" 2>&1 &
    PROM=$!; PIDS+=("$PROM")
    start_probe() {  # start_probe NAME ARGS…: a probe for the window and a little more; sets the pid in NAME
        "$BIN" probe "$URL" --duration $((SECS + 20)) --quiet "${@:2}" >"$OUT/$1.json" 2>"$OUT/$1.err" &
        printf -v "$1" '%s' "$!"; PIDS+=("$!")
    }
    if [ $((round % 2)) -eq 1 ]; then
        start_probe A --metrics "127.0.0.1:$MPORT" --metrics-token "$TOKEN"; start_probe B
    else
        start_probe B; start_probe A --metrics "127.0.0.1:$MPORT" --metrics-token "$TOKEN"
    fi
    # The window opens once Prometheus has scraped the probe (its target is up) and both probes have run 5 s.
    for _ in $(seq 1 300); do
        [ "$(query "up")" = "1" ] && break
        sleep 0.1
    done
    sleep 5
    a0=$(ticks "$A"); b0=$(ticks "$B")
    sleep "$SECS"
    a1=$(ticks "$A"); b1=$(ticks "$B")
    scrapes=$(query 'count_over_time(up[10m])')
    kill "$A" "$B" "$PROM" 2>/dev/null || true; wait "$A" "$B" "$PROM" 2>/dev/null || true
    a=$((a1 - a0)); b=$((b1 - b0)); with=$((with + a)); without=$((without + b))
    python3 -c "import json; print(json.dumps({'round': $round, 'seconds': $SECS, 'withMetricsCpuS': $a / $TICK, 'withoutCpuS': $b / $TICK, 'ratio': round($a / max($b, 1), 3), 'scrapes': ${scrapes:-0}}))"
done
python3 -c "import json; print(json.dumps({'what': 'probe --metrics, scraped every 1 s, against the same probe without it', 'cpuWith': $with / $TICK, 'cpuWithout': $without / $TICK, 'ratio': round($with / max($without, 1), 3)}))"
