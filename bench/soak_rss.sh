#!/usr/bin/env bash
# Memory over a long soak: one 1280x720@30 stream, 4 probing viewers, SECONDS (default 30 minutes); prints
# the soak's totals as one JSON line and keeps the report (soak.json, soak.html) in REPORT_DIR.
# Usage: bash bench/soak_rss.sh [SECONDS] [REPORT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-1800}"; DIR="${2:-bench/out/soak}"
mkdir -p "$(dirname "$DIR")"
release_binary
"$BIN" soak --streams 1 --viewers 4 --size 1280x720 --fps 30 --duration "$SECS" --report "$DIR" >"$DIR.log" 2>&1 || true
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); t=r["totals"]; t["bench"]="soak"; print(json.dumps(t))' "$DIR/soak.json"
