#!/usr/bin/env bash
# Resident memory of a `run --webrtc` (timecode scene, 640x360) across N browser windows that come and go: each a WHEP
# session (`probe whep+…` for 3 s) asking for a window of its own (POST /v1/whep/ID/window, four sizes in turn), so a
# rendition is made, encoded, watched and dropped. Prints, after each window, the resident MiB, the MiB glibc's
# allocator has given out, and of those the MiB in its heaps, not mapped apart (the hour with everything on,
# bench/everything.sh, grew with its windows: issue 52).
# SIZES=random: each window a size of its own (even sides, 160..960 x 90..540, seeded by SEED, default 1), as the
# hour's windows were once; SIZES=hour: the five sizes the hour's windows take now (320 to 854 wide, 16:9), in turn;
# otherwise four sizes in turn. VIEWER=chromium: each window the hour's own, headless Chromium on the owner's page
# (Tests/Fixtures/web_viewer.py, its video made the window's size with "follow this window" on, 3 s watched).
# SCENE=FILE: another scene (the hour's is examples/info-panel.yaml).
# Usage: bash bench/window_memory.sh [N] [BIN] [extra run args…]   (env MALLOC_MMAP_THRESHOLD_ is passed on)
set -uo pipefail
cd "$(dirname "$0")/.."
N=${1:-20}; BIN=${2:-.build/release/pipcompose}; shift $(( $# < 2 ? $# : 2 ))
D=$(mktemp -d)
P=$(python3 -c "import socket;s=socket.socket();s.bind(('127.0.0.1',0));print(s.getsockname()[1])")
C=$(python3 -c "import socket;s=socket.socket();s.bind(('127.0.0.1',0));print(s.getsockname()[1])")
T=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
$BIN run "${SCENE:-examples/timecode.yaml}" --size 640x360 --webrtc --rtsp 127.0.0.1:$P/pip --control 127.0.0.1:$C --control-token $T "$@" > $D/run.log 2>&1 &
RUN=$!
for i in $(seq 50); do grep -q "^webrtc http" $D/run.log && break; sleep 0.2; done
rss() { awk '/VmRSS/{print $2/1024}' /proc/$RUN/status; }
heap() {
  curl -s -H "Authorization: Bearer $T" http://127.0.0.1:$C/metrics \
    | awk '/^pipcompose_process_heap_allocated_bytes/{a=$2} /^pipcompose_process_heap_mapped_bytes/{m=$2}
           END{printf "%.2f %.2f", a/1048576, (a-m)/1048576}'
}
RANDOM=${SEED:-1}
echo "window resident_MiB heap_allocated_MiB in_heaps_MiB"
echo "start $(rss) $(heap)"
for i in $(seq $N); do
  if [ "${SIZES:-}" = random ]; then
    W=$((2 * (80 + RANDOM % 401))); H=$((2 * (45 + RANDOM % 226)))
  elif [ "${SIZES:-}" = hour ]; then
    HOUR_WIDTHS=(320 416 480 640 854); W=${HOUR_WIDTHS[$((i % 5))]}; H=$((W * 9 / 16 / 2 * 2))
  else
    W=$((320 + (i % 4) * 32)); H=$((W * 9 / 16 / 2 * 2))
  fi
  if [ "${VIEWER:-}" = chromium ]; then
    # The hour's window: headless Chromium on the owner's page, its video made WxH with "follow this window" on.
    /usr/bin/python3 Tests/Fixtures/web_viewer.py "http://127.0.0.1:$C/?token=$T" --seconds 3 --resize ${W}x$H \
      --follow own --timeout 40 > /dev/null 2>&1
  else
    PIPCOMPOSE_WHEP_TOKEN=$T $BIN probe whep+http://127.0.0.1:$C/v1/whep --duration 3 --quiet > /dev/null 2>&1 &
    PR=$!
    ID=""
    for k in $(seq 50); do
      ID=$(curl -s -H "Authorization: Bearer $T" http://127.0.0.1:$C/v1/status | python3 -c "import json,sys;s=json.load(sys.stdin).get('webrtc',{}).get('sessions',[]);print(s[0]['id'] if s else '')")
      [ -n "$ID" ] && break; sleep 0.1
    done
    curl -s -o /dev/null -H "Authorization: Bearer $T" -H "Content-Type: application/json" -X POST -d "{\"width\":$W,\"height\":$H}" http://127.0.0.1:$C/v1/whep/$ID/window
    wait $PR
  fi
  sleep 0.5
  echo "$i $(rss) $(heap)"
done
kill -INT $RUN; wait $RUN
rm -rf "$D"
