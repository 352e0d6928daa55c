#!/usr/bin/env bash
# A browser window's own picture against the old way: headless Chromium (Tests/Fixtures/web_viewer.py) plays the live
# page, makes its video element 480x270 with "follow this window", and times the page's own view of it: from the
# element's new size to the first frame of that size it shows (300 ms of it the page's debounce). "own": a rendition
# made for the window (POST /v1/whep/ID/window); "shared": the main picture resized (POST /v1/resize), what the page
# did before and still offers; "popout": the pop-out's window (Document Picture-in-Picture, Tests/Fixtures/pip_window.py)
# made so its video is 480x270 through Chrome DevTools' window bounds, its own picture, timed from the bounds set to the
# first frame of that size in it. Also the step of the strip's frame number at the switch (1: no frame lost or
# repeated).
# A fresh run and a fresh browser for each try, the two ways alternating.
# Usage: bash bench/windows.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
ROUNDS="${1:-5}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"; [ -n "${SRC:-}" ] && kill "$SRC" 2>/dev/null; true' EXIT
release_binary
for i in $(seq 1 "$ROUNDS"); do
    for mode in own shared popout; do
        port=$(free_port)
        rm -f "$OUT/run.log"
        "$BIN" run examples/timecode.yaml --size 640x360 --webrtc --control "127.0.0.1:$port" --rtsp "127.0.0.1:0/pip" \
            >"$OUT/run.log" 2>&1 &
        SRC=$!
        wait_for_line "$OUT/run.log" "^webrtc http" "$SRC" "pipcompose did not start"
        # The owner's page (a watch link's, which run prints, has no "resize the shared picture").
        page=$("$BIN" ctl --control "http://127.0.0.1:$port" page)
        if [ "$mode" = popout ]; then
            /usr/bin/python3 Tests/Fixtures/pip_window.py "$page" --popout 480x270 >"$OUT/$mode.$i.json" 2>/dev/null || true
        else
            /usr/bin/python3 Tests/Fixtures/web_viewer.py "$page" --seconds 2 --resize 480x270 --follow "$mode" \
                >"$OUT/$mode.$i.json" 2>/dev/null || true
        fi
        python3 - "$OUT/$mode.$i.json" "$mode" <<'PY'
import json, sys
seen = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
sizes = seen.get("stats", seen.get("switch", {})).get("sizes", [])
step = sizes[-1].get("step") if len(sizes) > 1 else None
print(sys.argv[2], round(seen.get("resizeSeconds", -1) * 1000), step, seen.get("error") or "")
PY
        stop_source
    done
done | tee "$OUT/all"
awk '{ ms[$1] = ms[$1] " " $2; st[$1] = st[$1] " " $3 } END {
    for (m in ms) printf "%s: window resized → first frame of its size shown, ms:%s; strip step at the switch:%s\n",
        (m == "own" ? "its own picture" : m == "popout" ? "the pop-out window, its own picture" : "the shared picture resized"),
        ms[m], st[m] }' "$OUT/all"
