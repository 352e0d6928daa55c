#!/usr/bin/env bash
# Web widgets' cost, measured beside the peer in one run, on the same page (bench/web/animated.html: the whole
# 1280x720 picture moves every frame):
#   pipcompose: the page as a full-picture web widget, drawn, composited and encoded into an MP4;
#   peer:       gst-launch-1.0 wpesrc ! x264enc into an MP4, the same x264 settings (ultrafast, zerolatency, bitrate);
# and a quiet page (bench/web/slow.html: a clock in a corner, once a second) against the same scene without it.
# CPU of every process of each run's session and of its pages' sessions (WebKit's web and network processes
# included), from /proc over the same window after a warm-up; and how many different pictures of the page each MP4
# holds a second over that window (ffmpeg's mpdecimate: a page WebKit could not draw in time shows the same picture
# again), so a cost is also compared per picture WebKit drew. Prints JSON lines and the ratios.
# Usage: bash bench/web.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-20}"; ROUNDS="${2:-3}"; WARM=5; FPS=30; W=1280; H=720
OUT="$(mktemp -d)"; trap 'rm -rf "$OUT"' EXIT
release_binary
TICK=$(getconf CLK_TCK)
BITRATE=$(( W * H * FPS * 9 / 100 / 1000 ))
X264="tune=zerolatency speed-preset=ultrafast bitrate=$BITRATE key-int-max=$FPS"
page() { echo "file://$PWD/bench/web/$1"; }

scene() { # NAME PAGE: a 1280x720 scene, one full-picture web widget (PAGE empty: none)
    cp bench/web/*.html "$OUT/"
    { echo "size: ${W}x${H}"; echo "fps: $FPS"; echo "layout: {padding: 0, gap: 0}"; echo "background: '#0b1a2e'"
      echo "widgets:"
      if [ -n "$2" ]; then echo "  - {id: page, type: web, source: $2, place: fill}"
      else echo "  - {id: nothing, type: text, text: '', place: {edge: top, size: 0.01}}"; fi
    } >"$OUT/$1.yaml"
}

measure() { # NAME COMMAND...: CPU seconds of the command's sessions over SECS after WARM
    local name="$1"; shift
    setsid "$@" >"$OUT/$name.log" 2>&1 &
    local pid=$!
    sleep "$WARM"
    local t0; t0=$(python3 bench/session_cpu.py "$pid")
    sleep "$SECS"
    local t1; t1=$(python3 bench/session_cpu.py "$pid")
    kill -INT "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
    pkill -9 -s "$pid" 2>/dev/null || true
    python3 -c "print(round(($t1 - $t0) / $TICK, 3))"
}

distinct_fps() { # MP4: pictures a second that differ from the one before (mpdecimate's defaults), from WARM s on for
    # SECS s (the window the CPU is measured over; pipcompose's file also holds the seconds before the page loaded)
    local kept total
    kept=$(ffmpeg -v error -nostats -ss "$WARM" -t "$SECS" -i "$1" -vf mpdecimate -progress pipe:1 -f null - 2>/dev/null | grep '^frame=' | tail -1 | cut -d= -f2)
    total=$(ffmpeg -v error -nostats -ss "$WARM" -t "$SECS" -i "$1" -progress pipe:1 -f null - 2>/dev/null | grep '^frame=' | tail -1 | cut -d= -f2)
    python3 -c "print(round($kept / $total * $FPS, 2))"
}

scene animated animated.html
scene quiet slow.html
scene none ""
for r in $(seq 1 "$ROUNDS"); do
    pip=$(measure "pip$r" "$BIN" run "$OUT/animated.yaml" --no-control --record "$OUT/pip$r.mp4" \
        --duration $((WARM + SECS + 5)) --preset ultrafast)
    peer=$(measure "peer$r" env LIBGL_ALWAYS_SOFTWARE=1 gst-launch-1.0 -q -e wpesrc location="$(page animated.html)" \
        ! video/x-raw,width=$W,height=$H,framerate=$FPS/1 ! videoconvert ! video/x-raw,format=I420 \
        ! x264enc $X264 ! h264parse ! mp4mux fragment-duration=500 ! filesink location="$OUT/peer$r.mp4")
    quiet=$(measure "quiet$r" "$BIN" run "$OUT/quiet.yaml" --no-control --record "$OUT/quiet$r.mp4" --duration $((WARM + SECS + 5)))
    none=$(measure "none$r" "$BIN" run "$OUT/none.yaml" --no-control --record "$OUT/none$r.mp4" --duration $((WARM + SECS + 5)))
    pipfps=$(distinct_fps "$OUT/pip$r.mp4"); peerfps=$(distinct_fps "$OUT/peer$r.mp4")
    python3 - "$pip" "$peer" "$quiet" "$none" "$SECS" "$r" "$pipfps" "$peerfps" <<'PY'
import json, sys
pip, peer, quiet, none, secs, r, pipfps, peerfps = map(float, sys.argv[1:])
print(json.dumps({"bench": "web", "round": int(r), "seconds": secs, "animatedPageCpuS": {"pipcompose": pip, "wpesrcX264": peer},
                  "ratio": round(pip / peer, 3),
                  "animatedDistinctFps": {"pipcompose": pipfps, "wpesrcX264": peerfps},
                  "ratioPerDistinctPicture": round((pip / pipfps) / (peer / peerfps), 3) if pipfps and peerfps else None,
                  "quietPageCpuS": quiet, "sameSceneWithoutPageCpuS": none,
                  "quietPageCoreShare": round((quiet - none) / secs, 4)}))
PY
done
