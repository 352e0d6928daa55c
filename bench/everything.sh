#!/usr/bin/env bash
# An hour with everything on (issue 52): bench/everything.py against the release build. Prints its JSON line.
# Usage: bash bench/everything.sh [SECONDS] [OUT] [--no-windows] [--windows-nice N] [--resize-every SECONDS] [--no-warm-up-cycle]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
release_binary
exec /usr/bin/python3 bench/everything.py "$BIN" --seconds "${1:-3600}" --out "${2:-bench/out/everything}" "${@:3}"
