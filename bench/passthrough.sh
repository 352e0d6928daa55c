#!/usr/bin/env bash
# Pass-through latency of pipcompose itself, measured by its own strip: a source pipcompose (A) renders the
# timecode scene and serves RTSP; a second pipcompose (B) takes A's stream as a full-picture video layer (decoded,
# painted, encoded again) and serves it. `pipcompose probe` reads A's strip from both streams at the same time (TCP,
# jitter buffer 0): B's latency − A's latency is what one pipcompose in between adds (RTSP in, decode, composite,
# encode, RTSP out). The same recipe measures any system put between A and the probe.
# Usage: bash bench/passthrough.sh [SECONDS] [WxH]   — prints one JSON line.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-30}"; SIZE="${2:-1280x720}"; FPS=30
OUT="$(mktemp -d)"
RELAY=""
trap 'stop_source; [ -n "$RELAY" ] && kill -INT "$RELAY" 2>/dev/null; rm -rf "$OUT"' EXIT
release_binary
PORT_A=$(free_port)
start_source "$OUT/a.log" examples/timecode.yaml --size "$SIZE" --fps $FPS --rtsp "127.0.0.1:$PORT_A/pip" \
    --duration $((SECS + 60))
cat >"$OUT/relay.yaml" <<YAML
size: $SIZE
fps: $FPS
widgets:
  - {id: a, type: video, source: "rtsp://127.0.0.1:$PORT_A/pip", fit: fill, place: background}
YAML
PORT_B=$(free_port)
"$BIN" run "$OUT/relay.yaml" --no-control --rtsp "127.0.0.1:$PORT_B/pip" --duration $((SECS + 50)) >"$OUT/b.log" 2>&1 &
RELAY=$!
for _ in $(seq 1 300); do grep -q "video 'a': playing" "$OUT/b.log" && break; sleep 0.1; done
grep -q "video 'a': playing" "$OUT/b.log" || { echo "the relaying pipcompose never showed A:" >&2; tail -5 "$OUT/b.log" >&2; exit 1; }
"$BIN" probe "rtsp://127.0.0.1:$PORT_A/pip" --transport tcp --duration "$SECS" --quiet --report "$OUT/a.json" >/dev/null &
PA=$!
"$BIN" probe "rtsp://127.0.0.1:$PORT_B/pip" --transport tcp --duration "$SECS" --quiet --report "$OUT/b.json" >/dev/null
wait "$PA"
python3 - "$OUT" "$SIZE" "$SECS" <<'PY'
import json, sys
out, size, secs = sys.argv[1], sys.argv[2], sys.argv[3]
res = {"bench": "passthrough", "size": size, "seconds": int(secs)}
for k in ("a", "b"):
    tot = json.load(open(f"{out}/{k}.json"))["total"]
    res["direct" if k == "a" else "through"] = {"latencyMs": tot.get("latencyMs"), "frames": tot["frames"],
                                                "dropped": tot["dropped"], "unreadable": tot["unreadable"]}
d, t = res["direct"]["latencyMs"], res["through"]["latencyMs"]
res["addedMs"] = {k: round(t[k] - d[k], 2) for k in ("p50", "p99", "mean") if k in d and k in t}
print(json.dumps(res))
PY
