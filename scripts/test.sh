#!/usr/bin/env bash
# The test command (CI runs it through .ci/run): installs what building and the tests need (idempotent;
# `scripts/setup.sh test`: ffmpeg, nginx-rtmp, D-Bus, Chromium…), builds, runs every test tier.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
swift build --build-tests
swift test --skip-build
