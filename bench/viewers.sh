#!/usr/bin/env bash
# RTSP viewers connecting at once to one 1280x720@30 stream: bench/rtsp_burst.py (raw-socket clients, light
# enough to hold a thousand) against `pipcompose run`, bursts of each size in turn; each viewer must get to
# PLAY and receive RTP. Usage: bash bench/viewers.sh [COUNT...]   — one JSON line per burst.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
COUNTS=("${@:-500 750 1000}")
read -r -a COUNTS <<<"${COUNTS[*]}"
OUT="$(mktemp -d)"
trap 'stop_source; rm -rf "$OUT"' EXIT
release_binary
PORT=$(free_port)
ulimit -n 8192 2>/dev/null || true
start_source "$OUT/source.log" --size 1280x720 --fps 30 --rtsp "127.0.0.1:$PORT/pip"
for N in "${COUNTS[@]}"; do
    python3 bench/rtsp_burst.py "rtsp://127.0.0.1:$PORT/pip" --viewers "$N" --timeout 30 --hold 2 \
        | python3 -c 'import json,sys; d=json.load(sys.stdin); d["bench"]="viewers"; print(json.dumps(d))'
done
kill -0 "$SRC" && echo '{"bench": "viewers-server", "alive": true}' || echo '{"bench": "viewers-server", "alive": false}'
stop_source
