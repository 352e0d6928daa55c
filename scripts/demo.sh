#!/usr/bin/env bash
# The demo: installs what pipcompose needs (idempotent), builds it, and renders the built-in demo scene.
# Extra arguments go to `pipcompose snapshot` (e.g. --size 480x854).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product pipcompose
BIN="$(swift build -c release --show-bin-path)/pipcompose"
"$BIN" snapshot -o demo.png "$@"
echo "open demo.png to see the demo scene"
