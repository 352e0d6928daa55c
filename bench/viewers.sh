#!/usr/bin/env bash
# RTSP viewers connecting at once to one 1280x720@30 stream: bench/rtsp_burst.py (raw-socket clients, light
# enough to hold a thousand) against `pipcompose run`, bursts of each size in turn; each viewer must get to
# PLAY and receive RTP. Usage: bash bench/viewers.sh [COUNT...]   — one JSON line per burst.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNTS=("${@:-500 750 1000}")
read -r -a COUNTS <<<"${COUNTS[*]}"
OUT="$(mktemp -d)"
SRC=""
trap '[ -n "$SRC" ] && kill "$SRC" 2>/dev/null; rm -rf "$OUT"' EXIT
swift build -c release --product pipcompose >/dev/null 2>&1
BIN="$(swift build -c release --show-bin-path)/pipcompose"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ulimit -n 8192 2>/dev/null || true
"$BIN" run --no-control --size 1280x720 --fps 30 --rtsp "127.0.0.1:$PORT/pip" >"$OUT/source.log" 2>&1 &
SRC=$!
for _ in $(seq 1 100); do grep -q "^serving" "$OUT/source.log" && break; sleep 0.1; done
for N in "${COUNTS[@]}"; do
    python3 bench/rtsp_burst.py "rtsp://127.0.0.1:$PORT/pip" --viewers "$N" --timeout 30 --hold 2 \
        | python3 -c 'import json,sys; d=json.load(sys.stdin); d["bench"]="viewers"; print(json.dumps(d))'
done
kill -0 "$SRC" && echo '{"bench": "viewers-server", "alive": true}' || echo '{"bench": "viewers-server", "alive": false}'
kill -INT "$SRC"; wait "$SRC" || true; SRC=""
