#!/usr/bin/env bash
# The demo: installs what building and running pipcompose need (idempotent; `scripts/setup.sh run`: no test tools, no
# browser), builds it, and serves the built-in demo scene at rtsp://127.0.0.1:8554/pip until Ctrl-C.
# Extra arguments go to `pipcompose run` (e.g. --record demo.mp4, --webrtc).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh run
swift build -c release --product pipcompose
BIN="$(swift build -c release --show-bin-path)/pipcompose"
exec "$BIN" run "$@"
