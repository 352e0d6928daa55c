# Shared by the bench scripts (sourced): the release binary, a free port, a pipcompose source to measure.

# Builds the release binary once and sets BIN to it.
release_binary() {
    swift build -c release --product pipcompose >/dev/null 2>&1
    BIN="$(swift build -c release --show-bin-path)/pipcompose"
}

# Prints a TCP port nobody listens on now.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# start_source LOG ARGS...: runs `pipcompose run ARGS` in the background (SRC = its pid) and returns once it
# serves; fails with its log if it does not within 30 s. stop_source ends it with SIGINT.
SRC=""
start_source() {
    local log="$1"; shift
    "$BIN" run --no-control "$@" >"$log" 2>&1 &
    SRC=$!
    for _ in $(seq 1 300); do
        grep -q "^serving" "$log" && return 0
        kill -0 "$SRC" 2>/dev/null || break
        sleep 0.1
    done
    echo "pipcompose did not start serving:" >&2; tail -5 "$log" >&2
    return 1
}
stop_source() {
    [ -n "$SRC" ] || return 0
    kill -INT "$SRC" 2>/dev/null || true
    wait "$SRC" || true
    SRC=""
}
