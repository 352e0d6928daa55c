#!/usr/bin/env bash
# A fleet soak seen through Prometheus, on one machine: a 1280x720@30 pipcompose stream (examples/timecode.yaml),
# a `soak --viewers-only` of VIEWERS viewers and two lone probes (TCP and UDP), each serving --metrics; Debian's
# Prometheus scrapes them every 5 s with deploy/prometheus's rules. After SECONDS, `soak report --prometheus` builds
# the fleet's report for the span, and the fleet's p50/p99 from the recording rules are printed beside what each
# member said itself at its end. Prints JSON lines; the report (soak.json, soak.html) is left in REPORT_DIR.
# Usage: bash bench/fleet_soak.sh [SECONDS] [VIEWERS] [REPORT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-600}"; VIEWERS="${2:-4}"; REPORT="${3:-bench/out/fleet-soak}"
OUT="$(mktemp -d)"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; stop_source; rm -rf "$OUT"' EXIT
release_binary
mkdir -p "$REPORT"
start_source "$OUT/run.log" examples/timecode.yaml --size 1280x720 --fps 30 --rtsp "127.0.0.1:$(free_port)/pip"
URL=$(sed -n 's/^serving //p' "$OUT/run.log" | head -1)
TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
printf '%s' "$TOKEN" >"$OUT/token"
export PIPCOMPOSE_METRICS_TOKEN="$TOKEN"
S=$(free_port); T=$(free_port); U=$(free_port); P=$(free_port)
cat >"$OUT/prometheus.yml" <<YML
global: {scrape_interval: 5s, evaluation_interval: 5s}
rule_files: [$PWD/deploy/prometheus/pipcompose-rules.yml]
scrape_configs:
  - job_name: pipcompose-probes
    authorization: {type: Bearer, credentials_file: $OUT/token}
    static_configs: [{targets: ["127.0.0.1:$S", "127.0.0.1:$T", "127.0.0.1:$U"]}]
YML
/usr/bin/prometheus --config.file="$OUT/prometheus.yml" --storage.tsdb.path="$OUT/data" \
    --web.listen-address="127.0.0.1:$P" --log.level=warn >"$OUT/prom.log" 2>&1 &
PIDS+=("$!")
FROM=$(date +%s)
"$BIN" soak --viewers-only "$URL" --viewers "$VIEWERS" --reference examples/timecode.yaml --duration "$SECS" \
    --metrics "127.0.0.1:$S" --report "$OUT/soak-self" >"$OUT/soak.log" 2>&1 &
SOAK=$!; PIDS+=("$SOAK")
"$BIN" probe "$URL" --duration "$SECS" --json --quiet --metrics "127.0.0.1:$T" >"$OUT/tcp.json" 2>"$OUT/tcp.err" &
TCP=$!; PIDS+=("$TCP")
"$BIN" probe "$URL" --transport udp --duration "$SECS" --json --quiet --metrics "127.0.0.1:$U" >"$OUT/udp.json" 2>"$OUT/udp.err" &
UDP=$!; PIDS+=("$UDP")
wait "$SOAK" "$TCP" "$UDP" || true
TO=$(date +%s)
q() {  # q EXPR: an instant query's first value at TO
    python3 - "http://127.0.0.1:$P/api/v1/query" "$1" "$TO" <<'PY'
import json, sys, urllib.parse, urllib.request
r = json.load(urllib.request.urlopen(sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2], "time": sys.argv[3]}), timeout=10))
v = r["data"]["result"]
print(json.dumps({m.get("metric", {}).get("__name__", "") or sys.argv[2]: m["value"][1] for m in v}) if v else "null")
PY
}
echo "{\"fleetP50\": $(q 'pipcompose:probe_latency_seconds:p50_1m'), \"fleetP99\": $(q 'pipcompose:probe_latency_seconds:p99_1m')}"
# Exit 3 is a report with a threshold crossed (unreadable strips, drops): still a report.
status=0
"$BIN" soak report --prometheus "http://127.0.0.1:$P" --from "$FROM" --to "$TO" --report "$REPORT" >"$OUT/report.log" 2>&1 \
    || status=$?
cat "$OUT/report.log"
[ "$status" -eq 0 ] || [ "$status" -eq 3 ] || exit 1
python3 - "$REPORT/soak.json" "$OUT/tcp.json" "$OUT/udp.json" "$OUT/soak-self/soak.json" <<'PY'
import json, sys
keys = ("viewerFrames", "viewerDropped", "unreadable", "latencyP50", "latencyP99", "compared", "corrupt", "ssimP1")
fleet = json.load(open(sys.argv[1]))
own = [json.load(open(p)) for p in sys.argv[2:4]]
soak = json.load(open(sys.argv[4]))
print(json.dumps({"fromPrometheus": {k: fleet["totals"].get(k) for k in keys},
                  "fromPrometheusViewers": [{"url": v["url"], "frames": v["total"]["frames"]} for v in fleet["viewers"]],
                  "probesOwn": [{"frames": o["total"]["frames"], "dropped": o["total"]["dropped"],
                                 "p50": (o["total"].get("latencyMs") or {}).get("p50"),
                                 "p99": (o["total"].get("latencyMs") or {}).get("p99")} for o in own],
                  "soakOwn": {k: soak["totals"].get(k) for k in keys}}))
PY
