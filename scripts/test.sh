#!/usr/bin/env bash
# The test command (CI runs it through .ci/run): installs what building and the tests need (idempotent;
# `scripts/setup.sh test`: ffmpeg, nginx-rtmp, D-Bus, Chromium…), builds, runs every test tier: the pure core
# first (its own package, Core/: seconds), then the unit, pipeline and end-to-end tiers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
swift test --package-path Core
swift build --build-tests
swift test --skip-build
