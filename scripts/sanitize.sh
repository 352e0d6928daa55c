#!/usr/bin/env bash
# The sanitizer tier: the unit and pipeline tests under Thread Sanitizer, in a build folder of their own
# (.build-tsan), so the ordinary build is left as it is. Exits non-zero when a test fails or TSan reports anything.
# Usage: bash scripts/sanitize.sh [FILTER]   (default: UnitTests|PipelineTests; the end-to-end tests run the
# uninstrumented binary and add nothing here)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
FILTER="${1:-UnitTests|PipelineTests}"
LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
# halt_on_error=0: every report is printed; the count below decides.
TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
    swift test --sanitize=thread --scratch-path .build-tsan --filter "$FILTER" 2>&1 | tee "$LOG"
reports=$(grep -c "WARNING: ThreadSanitizer" "$LOG" || true)
echo "sanitize: $reports ThreadSanitizer report(s)"
[ "$reports" -eq 0 ]
