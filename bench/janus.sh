#!/usr/bin/env bash
# WebRTC through Janus (deploy/janus), measured: (a) glass to glass in headless Chromium, one pipcompose (the timecode
# scene at 1280x720@30, --webrtc and --push rtp:// to one Janus) read by its own live page
# (Tests/Fixtures/web_viewer.py) and through Janus (web/janus.html, Tests/Fixtures/janus_viewer.py), alternately,
# LAT_RUNS runs each of LAT_SECS s (a fresh browser each run): p50/p99 per run and per path; (b) the most viewers with 0 stalls through ONE Janus
# against the same total through TWO Janus instances fed by one pipcompose (one encode, two pushes): for each COUNT
# and each layout a fresh pipcompose and fresh Janus, bench/janus_viewers.py (webrtcbin receivers speaking the Janus
# HTTP API, counting frames without decoding, joining STAGGER s apart round-robin over the instances; a stall is 500
# ms without a frame) watching for SECONDS; pipcompose's, each Janus's and the receivers' CPU over the same window.
# Everything shares this machine's cores: receivers and Janus take CPU from pipcompose and from each other, so the
# counts say where this box runs out, not what Janus on a host of its own carries.
# Janus 1.1.2 never offers loopback ICE candidates: each instance offers only this host's first IPv4 address
# (hostname -I), its API and RTP ports stay on loopback.
# Usage: bash bench/janus.sh [SECONDS] [VIEWER COUNTS…]   — prints JSON lines.
#   BIN=.build/release/pipcompose uses that binary as it is (no build); LAT_RUNS (3), LAT_SECS (10), STAGGER (0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-20}"; shift || true
if [ $# -gt 0 ]; then COUNTS=("$@"); else COUNTS=(25 50 100 150); fi
LAT_RUNS="${LAT_RUNS:-3}"; LAT_SECS="${LAT_SECS:-10}"; STAGGER="${STAGGER:-0.1}"
OUT="$(mktemp -d)"
PID=""
JANUS_PIDS=()

# Two UDP ports on loopback, each free with the port after it (where its RTCP goes), not next to each other:
# "VIDEO AUDIO".
free_rtp_ports() {
    python3 - <<'PY'
import socket
def pair():
    while True:
        a = socket.socket(type=socket.SOCK_DGRAM); a.bind(("127.0.0.1", 0)); p = a.getsockname()[1]
        b = socket.socket(type=socket.SOCK_DGRAM)
        try:
            b.bind(("127.0.0.1", p + 1))
            return p, (a, b)
        except OSError:
            pass
video, keep = pair()
while True:
    audio, keep2 = pair()
    if abs(audio - video) > 1:
        break
print(video, audio)
PY
}

# start_janus NAME ICE_RANGE: a copy of deploy/janus in OUT/NAME with ports of its own, started (pid appended to
# JANUS_PIDS); sets JANUS_API and JANUS_RTP. Returns once its HTTP transport listens.
start_janus() {
    local name="$1" range="$2" dir="$OUT/$1" http video audio
    http=$(free_port); read -r video audio < <(free_rtp_ports)
    rm -rf "$dir"; cp -r deploy/janus "$dir"
    sed -i "s/^\(\s*port = \)8088\$/\1$http/" "$dir/janus.transport.http.jcfg"
    # RTCP (when the mountpoint takes it) on the port after each stream's, where pipcompose sends it.
    sed -i "s/^\(\s*videoport = \)5004\$/\1$video/; s/^\(\s*audioport = \)5006\$/\1$audio/
            s/^\(\s*videortcpport = \)5005\$/\1$((video + 1))/; s/^\(\s*audiortcpport = \)5007\$/\1$((audio + 1))/" \
        "$dir/janus.plugin.streaming.jcfg"
    grep -q "^\s*port = $http\$" "$dir/janus.transport.http.jcfg" \
        && grep -q "^\s*videoport = $video\$" "$dir/janus.plugin.streaming.jcfg" \
        && grep -q "^\s*audioport = $audio\$" "$dir/janus.plugin.streaming.jcfg" \
        || { echo "deploy/janus's port lines moved: rewrite them here too" >&2; return 1; }
    /usr/bin/janus --configs-folder="$dir" --ice-enforce-list="$ICE" --rtp-port-range="$range" >"$OUT/$name.log" 2>&1 &
    JANUS_PIDS+=("$!")
    JANUS_API="http://127.0.0.1:$http/janus"
    JANUS_RTP="rtp://127.0.0.1:$video?audio=$audio"
    wait_for_line "$OUT/$name.log" "HTTP webserver started \(port $http" "${JANUS_PIDS[-1]}" "Janus $name did not start"
}

# start_pip ARGS...: pipcompose on the timecode scene at 1280x720@30 with ticks (rtp:// pushes need sound), its
# control API on CPORT with TOKEN; returns once it runs (PID).
start_pip() {
    CPORT=$(free_port)
    rm -f "$OUT/run.log"
    "$BIN" run examples/timecode.yaml --size 1280x720 --fps 30 --audio ticks --control "127.0.0.1:$CPORT" \
        --control-token "$TOKEN" "$@" >"$OUT/run.log" 2>&1 &
    PID=$!
    wait_for_line "$OUT/run.log" " fps; type 'resize" "$PID" "pipcompose did not start"
}

# Until every started Janus has said its mountpoint gets video and audio from pipcompose.
wait_streams() {
    local name
    for name in "$@"; do
        for _ in $(seq 1 100); do
            grep -qs "New video stream" "$OUT/$name.log" && grep -qs "New audio stream" "$OUT/$name.log" && continue 2
            sleep 0.1
        done
        echo "Janus $name got no stream from pipcompose:" >&2; tail -5 "$OUT/$name.log" >&2; return 1
    done
}

status() {
    python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen(urllib.request.Request('http://127.0.0.1:$CPORT/v1/status', headers={'Authorization': 'Bearer $TOKEN'})).read().decode())"
}

stop_all() {
    local p
    if [ -n "$PID" ]; then kill -INT "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=""; fi
    for p in "${JANUS_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${JANUS_PIDS[@]}"; do
        for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    JANUS_PIDS=()
}

trap 'stop_all; rm -rf "$OUT"' EXIT
if [ -z "${BIN:-}" ]; then release_binary; fi
[ -x "$BIN" ] || { echo "no pipcompose at $BIN" >&2; exit 1; }
[[ "$("$BIN" run --help 2>&1)" == *rtp://* ]] || { echo "$BIN cannot push rtp://" >&2; exit 1; }
ICE=$(hostname -I | tr ' ' '\n' | grep -E '^[0-9]+(\.[0-9]+){3}$' | grep -v '^127\.' | head -1 || true)
[ -n "$ICE" ] || { echo "no non-loopback IPv4 address: Janus offers ICE on none" >&2; exit 1; }
TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')

# (a) Glass to glass: one pipcompose, one Janus; its own page and Janus's page alternately, a fresh browser each time
# (LAT_RUNS=0 leaves it out).
if [ "$LAT_RUNS" -gt 0 ]; then
    start_janus janus-a 20000-24999
    start_pip --webrtc --push "$JANUS_RTP"
    wait_streams janus-a
    for run in $(seq 1 "$LAT_RUNS"); do
        /usr/bin/python3 Tests/Fixtures/web_viewer.py "http://127.0.0.1:$CPORT/?token=$TOKEN" --seconds "$LAT_SECS" \
            --timeout 60 >"$OUT/webrtc.$run.json" || true
        /usr/bin/python3 Tests/Fixtures/janus_viewer.py "$JANUS_API" --seconds "$LAT_SECS" --timeout 60 \
            >"$OUT/janus.$run.json" || true
        python3 - "$OUT/webrtc.$run.json" "$OUT/janus.$run.json" "$run" <<'PY'
import json, sys
def load(p):
    try:
        return json.load(open(p))
    except ValueError:
        return {"error": "no JSON"}
w, j = load(sys.argv[1]), load(sys.argv[2])
s = w.get("stats", {})
print(json.dumps({"bench": "janus-glass", "path": "pipcompose-webrtc", "run": int(sys.argv[3]), "frames": s.get("frames"),
                  "p50Ms": s.get("p50"), "p99Ms": s.get("p99"), "fps": s.get("fps"), "error": w.get("error")}))
v = (j.get("servers") or [{}])[0] or {}
print(json.dumps({"bench": "janus-glass", "path": "janus", "run": int(sys.argv[3]), "frames": v.get("frames"),
                  "readable": v.get("readable"), "unreadable": v.get("unreadable"), "p50Ms": v.get("p50"),
                  "p99Ms": v.get("p99"), "fps": v.get("fps"), "firstPictureMs": v.get("firstPictureMs"),
                  "lost": (v.get("received") or {}).get("lost"), "error": j.get("error")}))
PY
    done | tee "$OUT/glass.jsonl"
    stop_all
    python3 - "$OUT/glass.jsonl" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
for path in ("pipcompose-webrtc", "janus"):
    r = [x for x in runs if x["path"] == path]
    p50 = [x["p50Ms"] for x in r if x.get("p50Ms") is not None]
    p99 = [x["p99Ms"] for x in r if x.get("p99Ms") is not None]
    print(json.dumps({"bench": "janus-glass-runs", "path": path, "runs": len(r), "p50s": p50, "p99s": p99,
                      "medianP50": statistics.median(p50) if p50 else None, "worstP99": max(p99) if p99 else None}))
PY
fi

# (b) Viewers: ONE Janus, then TWO fed by one pipcompose, the same total, each on fresh processes.
for n in "${COUNTS[@]}"; do
    for instances in 1 2; do
        start_janus janus-a 20000-24999
        APIS=("$JANUS_API"); PUSH=(--push "$JANUS_RTP"); NAMES=(janus-a)
        if [ "$instances" = 2 ]; then
            start_janus janus-b 25000-29999
            APIS+=("$JANUS_API"); PUSH+=(--push "$JANUS_RTP"); NAMES+=(janus-b)
        fi
        start_pip "${PUSH[@]}"
        wait_streams "${NAMES[@]}"
        PIDARGS=(--pid "pipcompose=$PID")
        for i in "${!NAMES[@]}"; do PIDARGS+=(--pid "${NAMES[$i]}=${JANUS_PIDS[$i]}"); done
        /usr/bin/python3 bench/janus_viewers.py "$n" "$SECS" "${APIS[@]}" --stagger "$STAGGER" "${PIDARGS[@]}" \
            >"$OUT/viewers.json" || { echo "the viewers failed; pipcompose said:" >&2; tail -20 "$OUT/run.log" >&2; exit 1; }
        status >"$OUT/status.json" || echo '{}' >"$OUT/status.json"
        stop_all
        python3 - "$OUT/viewers.json" "$OUT/status.json" "$instances" <<'PY' | tee -a "$OUT/viewers.jsonl"
import json, sys
v = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
w = v["seconds"]
pct = lambda sec: round(100 * sec / w, 1)
cpu = v["cpuSeconds"]
pushes = [o for o in s.get("outputs", []) if o["id"].startswith("push:")]
print(json.dumps({"bench": "janus-viewers", "janus": int(sys.argv[3]), "viewers": v["viewers"],
                  **{k: v[k] for k in ("seconds", "joinSeconds", "joinMsMedian", "joinMsMax", "connected", "failed", "errors", "hangups", "noFrames",
                                       "stalls", "viewersWithStalls", "longestGapMs", "framesMin", "framesMedian",
                                       "audioPacketsMin", "audioPacketsMedian")},
                  "pipcomposeCpuPct": pct(cpu["pipcompose"]),
                  "janusCpuPct": [pct(c) for k, c in cpu.items() if k.startswith("janus")],
                  "receiverCpuPct": pct(v["receiverCpuSeconds"]), "machineBusyPct": v["machineBusyPct"],
                  "perServer": v["perServer"],
                  "sourceDropped": s.get("dropped"), "pushDropped": [o["dropped"] for o in pushes]}))
PY
    done
done
python3 - "$OUT/viewers.jsonl" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
for j in (1, 2):
    clean = [r["viewers"] for r in runs if r["janus"] == j and r["stalls"] == 0 and r["failed"] == 0
             and r["connected"] == r["viewers"]]
    print(json.dumps({"bench": "janus-viewers-most", "janus": j, "mostWithoutStalls": max(clean, default=0),
                      "counts": [r["viewers"] for r in runs if r["janus"] == j]}))
PY
