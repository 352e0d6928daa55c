#!/usr/bin/env bash
# The test command: installs what the tests need (idempotent), builds, runs every test tier.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build --build-tests
swift test --skip-build
