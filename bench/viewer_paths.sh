#!/usr/bin/env bash
# A browser viewer's glass-to-glass latency by the way its packets take, in one run of the bench, each path with a
# fresh `pipcompose run --webrtc` (the timecode scene at 1280x720@30) and a fresh headless Chromium on the watch
# link's page for SECS seconds (the page reads the strip of each frame it shows: render → displayed):
#   direct  the browser on loopback, host candidates;
#   turn    the browser allowed TURN's relay alone (?relay=1), through a coturn of the bench's own on loopback
#           (use-auth-secret); also the CPU seconds coturn spent relaying, against pipcompose's;
#   nat     pipcompose at "home" behind one NAT (its port forwarded), the browser behind another, STUN from coturn
#           between them: network namespaces with nftables masquerade (needs root), torn down after;
#   symmetric  the same two homes with both NATs symmetric (masquerade fully-random), where only TURN gets
#           through: pipcompose given the coturn between them as TURN too; also coturn's CPU seconds.
# Prints a JSON line per path, then the ratios to the direct path.
# Usage: sudo bash bench/viewer_paths.sh [SECS]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
SECS="${1:-20}"
OUT="$(mktemp -d)"
T=$((RANDOM % 9000 + 1000))
PIDS=()
NS=(pbh$T pbhr$T pbin$T pbvr$T pbv$T)
cleanup() {
    for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done
    sleep 1
    for n in "${NS[@]}"; do ip netns del "$n" 2>/dev/null || true; done
    rm -rf "$OUT"
}
trap cleanup EXIT
release_binary
echo "s3cret" >"$OUT/secret"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu() { awk '{print ($14+$15)/100}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# $1 path, $2 the page's URL, $3 pipcompose's pid, $4 coturn's pid (or 0), then the command that runs the browser.
measure() {
    local path=$1 url=$2 pc=$3 turn=$4; shift 4
    local pc0 t0; pc0=$(cpu "$pc"); t0=$([ "$turn" != 0 ] && cpu "$turn" || echo 0)
    "$@" /usr/bin/python3 Tests/Fixtures/web_viewer.py "$url" --seconds "$SECS" --timeout 60 --leave quit \
        >"$OUT/$path.json" || true
    local pc1 t1; pc1=$(cpu "$pc"); t1=$([ "$turn" != 0 ] && cpu "$turn" || echo 0)
    python3 - "$OUT/$path.json" "$path" "$pc0" "$pc1" "$t0" "$t1" <<'PY'
import json, sys
b = json.load(open(sys.argv[1])); s = b.get("stats", {})
f = [float(x) for x in sys.argv[3:]]
print(json.dumps({"bench": "viewer-path", "path": sys.argv[2], "frames": s.get("frames"), "p50Ms": s.get("p50"),
                  "p99Ms": s.get("p99"), "fps": s.get("fps"), "dropped": s.get("dropped"),
                  "pipcomposeCpuS": round(f[1] - f[0], 2), "coturnCpuS": round(f[3] - f[2], 2),
                  "error": b.get("error")}))
PY
}

start_run() {  # $1 log; the rest: extra arguments, or a prefix command before the binary through RUNPREFIX
    local log=$1; shift
    ${RUNPREFIX:-} "$BIN" run examples/timecode.yaml --size 1280x720 --fps 30 --webrtc "$@" >"$log" 2>&1 &
    PID=$!
    PIDS+=("$PID")
    for _ in $(seq 1 300); do grep -qs "^webrtc " "$log" && break; sleep 0.1; done
    PAGE=$(grep "^webrtc " "$log" | awk '{print $2}')
}

# direct
start_run "$OUT/direct.log" --control "127.0.0.1:$(port)" --rtsp "127.0.0.1:$(port)/pip"
measure direct "$PAGE" "$PID" 0 | tee -a "$OUT/paths.jsonl"
kill -INT "$PID"; wait "$PID" || true

# turn, on loopback
TP=$(port); RP=$(port)
turnserver -n --listening-ip=127.0.0.1 --listening-port="$TP" --relay-ip=127.0.0.1 --min-port="$RP" \
    --max-port=$((RP + 40)) --use-auth-secret --static-auth-secret=s3cret --realm=bench --no-tls --no-dtls --no-cli \
    --allow-loopback-peers --userdb="$OUT/turndb" --pidfile="$OUT/turn.pid" --log-file=stdout >"$OUT/turn.log" 2>&1 &
TURN=$!; PIDS+=("$TURN")
for _ in $(seq 1 100); do grep -qs "Relay ports initialization done" "$OUT/turn.log" && break; sleep 0.1; done
start_run "$OUT/turn-run.log" --control "127.0.0.1:$(port)" --rtsp "127.0.0.1:$(port)/pip" \
    --ice-server "turn:127.0.0.1:$TP" --turn-secret-file "$OUT/secret"
measure turn "$PAGE&relay=1" "$PID" "$TURN" | tee -a "$OUT/paths.jsonl"
kill -INT "$PID"; wait "$PID" || true
kill "$TURN"; wait "$TURN" 2>/dev/null || true

# nat: two homes, two NATs (port-preserving, dropping what comes in unasked), coturn for STUN between them
set -e
for n in "${NS[@]}"; do ip netns add "$n"; ip -n "$n" link set lo up; done
mk() { ip link add "$2$T" netns "$1" type veth peer name "$4$T" netns "$3"; ip -n "$1" link set "$2$T" up; ip -n "$3" link set "$4$T" up; }
mk "${NS[0]}" h0 "${NS[1]}" hr0; mk "${NS[1]}" hr1 "${NS[2]}" ih; mk "${NS[4]}" v0 "${NS[3]}" vr0; mk "${NS[3]}" vr1 "${NS[2]}" iv
ip -n "${NS[2]}" link add br0 type bridge; ip -n "${NS[2]}" link set br0 up
ip -n "${NS[2]}" link set "ih$T" master br0; ip -n "${NS[2]}" link set "iv$T" master br0
ip -n "${NS[2]}" addr add 198.51.100.254/24 dev br0
ip -n "${NS[0]}" addr add 10.1.0.2/24 dev "h0$T"; ip -n "${NS[0]}" route add default via 10.1.0.1
ip -n "${NS[1]}" addr add 10.1.0.1/24 dev "hr0$T"; ip -n "${NS[1]}" addr add 198.51.100.1/24 dev "hr1$T"
ip -n "${NS[4]}" addr add 10.2.0.2/24 dev "v0$T"; ip -n "${NS[4]}" route add default via 10.2.0.1
ip -n "${NS[3]}" addr add 10.2.0.1/24 dev "vr0$T"; ip -n "${NS[3]}" addr add 198.51.100.2/24 dev "vr1$T"
ip -n "${NS[2]}" route add default dev br0  # as the internet: a packet to an address nobody has is sent and lost
CP=8555
nat_rules() {  # $1: masquerade, or "masquerade fully-random" (symmetric)
    local how=$1
    for r in "${NS[1]} hr1 dnat" "${NS[3]} vr1 none"; do
        set -- $r "$how"
        ip netns exec "$1" sysctl -qw net.ipv4.ip_forward=1
        fwd=""; [ "$3" = dnat ] && fwd="chain pre { type nat hook prerouting priority dstnat; iifname \"$2$T\" tcp dport $CP dnat to 10.1.0.2:$CP; }"
        ip netns exec "$1" nft -f - <<NFT
flush ruleset
table ip nat {
  $fwd
  chain post { type nat hook postrouting priority srcnat; oifname "$2$T" $4; }
}
table ip filter {
  chain input { type filter hook input priority filter; iifname "$2$T" ct state new drop; }
}
NFT
    done
}
nat_rules masquerade
ip netns exec "${NS[2]}" turnserver -n --listening-ip=198.51.100.254 --listening-port=3478 --relay-ip=198.51.100.254 \
    --min-port=49152 --max-port=49300 --use-auth-secret --static-auth-secret=s3cret --realm=bench --no-tls --no-dtls \
    --no-cli --userdb="$OUT/turndb2" --pidfile="$OUT/turn2.pid" --log-file=stdout >"$OUT/turn2.log" 2>&1 &
TURN2=$!; PIDS+=("$TURN2")
for _ in $(seq 1 100); do grep -qs "Relay ports initialization done" "$OUT/turn2.log" && break; sleep 0.1; done
RUNPREFIX="ip netns exec ${NS[0]}" start_run "$OUT/nat.log" --control "0.0.0.0:$CP" --allow-host 198.51.100.1 \
    --ice-server stun:198.51.100.254:3478 --rtsp "127.0.0.1:$(port)/pip"
measure nat "${PAGE/0.0.0.0/198.51.100.1}" "$PID" 0 ip netns exec "${NS[4]}" | tee -a "$OUT/paths.jsonl"
kill -INT "$PID"; wait "$PID" || true

# symmetric: both NATs map each flow to a port of its own; TURN through the coturn between the homes
nat_rules "masquerade fully-random"
RUNPREFIX="ip netns exec ${NS[0]}" start_run "$OUT/sym.log" --control "0.0.0.0:$CP" --allow-host 198.51.100.1 \
    --ice-server stun:198.51.100.254:3478 --ice-server turn:198.51.100.254:3478 --turn-secret-file "$OUT/secret" \
    --rtsp "127.0.0.1:$(port)/pip"
measure symmetric "${PAGE/0.0.0.0/198.51.100.1}" "$PID" "$TURN2" ip netns exec "${NS[4]}" | tee -a "$OUT/paths.jsonl"
kill -INT "$PID"; wait "$PID" || true

python3 - "$OUT/paths.jsonl" <<'PY'
import json, sys
paths = {r["path"]: r for r in map(json.loads, open(sys.argv[1]))}
d = paths.get("direct", {})
ratio = lambda a, b: round(a / b, 2) if a and b else None
print(json.dumps({"bench": "viewer-paths", **{f"{p}P50/direct": ratio(r.get("p50Ms"), d.get("p50Ms")) for p, r in paths.items()},
                  **{f"{p}P99/direct": ratio(r.get("p99Ms"), d.get("p99Ms")) for p, r in paths.items()}}))
PY
