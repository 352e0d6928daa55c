# Shared by the bench scripts (sourced): the release binary, a free port, a pipcompose source to measure.

# Builds the release binary once and sets BIN to it.
release_binary() {
    swift build -c release --product pipcompose >/dev/null 2>&1
    BIN="$(swift build -c release --show-bin-path)/pipcompose"
}

# The fair floor's input: the demo scene recorded near-losslessly at SIZE and FPS for RUN seconds, decoded to raw
# I420 in RAWDIR (memory: read from disk, its cost varied by a third between runs); sets RAW (a gst-launch source
# of those frames paced at FPS), X264 (pipcompose's x264 settings for this size and rate) and MUX (as it muxes);
# PIP_X264 holds the same settings as pipcompose's arguments.
# Needs BIN, OUT, RAWDIR, SIZE, FPS, RUN, W and H.
#
# Reading runs in a thread of its own (rawvideoparse's task, named "reader:sink"), a short queue ahead of the paced
# encoder: the scripts leave that thread out of the floor instead of subtracting a separate run's reading. Read on
# the encoder's thread, the floor's reading and the read-only run's differed by up to 136 samples in 15 s (0.15
# ms/frame: the kernel's copy and page-cache bookkeeping cost one process more than the other in the same window),
# more than the difference measured. The thread named "paced:src" is the floor's encoder thread, as pipcompose's
# "frames:src" is; what a run of the same source into fakesink spends outside "reader" is the pacing, subtracted.
READER_THREAD='^reader'
same_pictures() {
    "$BIN" run --no-control --size "$SIZE" --fps "$FPS" --duration "$RUN" --bitrate 60000 --record "$OUT/ref.mkv" \
        >"$OUT/ref.log" 2>&1
    ffmpeg -v error -i "$OUT/ref.mkv" -f rawvideo -pix_fmt yuv420p -y "$RAWDIR/ref.yuv"
    RAW="filesrc location=$RAWDIR/ref.yuv ! rawvideoparse name=reader width=$W height=$H format=i420 framerate=$FPS/1"
    RAW="$RAW ! queue name=paced max-size-buffers=3 max-size-bytes=0 max-size-time=0 ! clocksync"
    # The bitrate pipcompose picks for this size and rate (0.09 bit per pixel).
    local bitrate=$(( W * H * FPS * 9 / 100 / 1000 ))
    X264="tune=zerolatency speed-preset=ultrafast bitrate=$bitrate key-int-max=$FPS"
    # ENCODER_THREADS=N in the environment: x264 with N threads on both sides (pipcompose's --encoder-threads).
    PIP_X264=()
    if [ -n "${ENCODER_THREADS:-}" ]; then X264="$X264 threads=$ENCODER_THREADS"; PIP_X264=(--encoder-threads "$ENCODER_THREADS"); fi
    MUX="h264parse ! mp4mux fragment-duration=500 ! filesink"
}

# The arguments of a steady-state benchmark, `[WxH] [FPS] [SECONDS] [ROUNDS]`: sets SIZE, FPS, SECS, ROUNDS, W, H,
# WARM (seconds before a window), FRAMES (in a window) and RUN (how long a measured process runs); OUT (a temp dir)
# and RAWDIR (one in memory, /dev/shm: raw pictures read from disk varied by a third in cost between runs here, as
# the page cache kept or dropped parts of the file), both removed at exit.
window_args() {
    SIZE="${1:-1280x720}"; FPS="${2:-30}"; SECS="${3:-20}"; ROUNDS="${4:-3}"
    WARM=5
    W="${SIZE%x*}"; H="${SIZE#*x}"
    FRAMES=$((SECS * FPS))
    RUN=$((WARM + SECS + 3))
    OUT="$(mktemp -d)"
    RAWDIR="$(mktemp -d -p /dev/shm)"
    trap 'rm -rf "$OUT" "$RAWDIR"' EXIT
}

# Prints a TCP port nobody listens on now.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_for_line LOG PATTERN PID WHAT: polls LOG until a line matches PATTERN (grep -E), 30 s at most; fails with
# "WHAT" and the log's tail when it does not, or when process PID ended first.
wait_for_line() {
    for _ in $(seq 1 300); do
        grep -Eqs "$2" "$1" && return 0
        kill -0 "$3" 2>/dev/null || break
        sleep 0.1
    done
    echo "$4:" >&2; tail -5 "$1" >&2
    return 1
}

# start_source LOG ARGS...: runs `pipcompose run ARGS` in the background (SRC = its pid) and returns once it
# serves; fails with its log if it does not within 30 s. stop_source ends it with SIGINT.
SRC=""
start_source() {
    local log="$1"; shift
    rm -f "$log"   # the child truncates it only once it runs: an old "serving" line must not answer for it
    "$BIN" run --no-control "$@" >"$log" 2>&1 &
    SRC=$!
    wait_for_line "$log" "^serving" "$SRC" "pipcompose did not start serving"
}
stop_source() {
    [ -n "$SRC" ] || return 0
    kill -INT "$SRC" 2>/dev/null || true
    wait "$SRC" || true
    SRC=""
}

# Steady-state CPU of one process (needs OUT, WARM, SECS, TICK and FRAMES set by the caller).
# CPU ticks (user + system) of a process and all its threads.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# "comm ticks" for each thread of a process.
thread_ticks() {
    for t in /proc/"$1"/task/*/stat; do
        sed -E 's/^[0-9]+ \((.*)\) (.*)$/\1\t\2/' "$t" 2>/dev/null | awk -F'\t' '{ split($2, f, " "); print $1 "\t" f[12] + f[13] }'
    done
}

# "NAME cpu_seconds" of a process over the window, from its ticks at both ends; for pipcompose also the split
# between its threads (from OUT/NAME.t0 and OUT/NAME.t1). For the fair floor's runs (same-pictures-*), the CPU
# without the reading thread, and that thread's on a line "NAME-reader cpu_seconds" before it.
report_window() {
    local name="$1" c0="$2" c1="$3" reader=0
    if [[ "$name" == same-pictures* ]]; then
        # The floor's reading thread is left out (see same_pictures); its cost is printed on a line of its own.
        reader=$(awk -F'\t' -v re="$READER_THREAD" 'FNR == NR { if ($1 ~ re) a += $2; next } $1 ~ re { b += $2 }
                                                  END { print b - a }' "$OUT/$name.t0" "$OUT/$name.t1")
        awk -v n="$name" -v r="$reader" -v t="$TICK" 'BEGIN { printf "%s-reader %.2f\n", n, r / t }'
    fi
    awk -v n="$name" -v a="$c0" -v b="$c1" -v r="$reader" -v t="$TICK" 'BEGIN { printf "%s %.2f\n", n, (b - a - r) / t }'
    if [[ "$name" == pipcompose* ]]; then
        # Thread CPU over the window, grouped: the encoder's streaming threads (x264 included), the frame loop,
        # everything else.
        awk -F'\t' -v n="$name" -v t="$TICK" -v f="$FRAMES" '
            FNR == NR { before[$1] += $2; next } { after[$1] += $2 }
            END { for (c in after) { d = (after[c] - before[c]) / t
                    g = (c ~ /^frames/) ? "encoder" : (c == "frame-loop") ? "frame-loop" : "other"; sum[g] += d }
                  printf "%s-threads encoder %.2f frame-loop %.2f (%.3f ms/frame) other %.2f (%.3f ms/frame)\n", n,
                         sum["encoder"], sum["frame-loop"], sum["frame-loop"] * 1000 / f, sum["other"], sum["other"] * 1000 / f }' \
            "$OUT/$name.t0" "$OUT/$name.t1"
    fi
}

# steady NAME COMMAND...: starts COMMAND, waits WARM s, measures its CPU over SECS s, then ends it.
# Prints "NAME cpu_seconds"; for pipcompose also the split between its threads.
steady() {
    launch "$@"
    measure_launched
}

# Side by side: `launch NAME COMMAND...` starts each process; `measure_launched` then waits WARM s, measures all
# of them over the same SECS s, ends them and prints each one's line as `steady` does, in launch order. Whatever
# the machine does in that minute (another guest's load, the host's frequency), every one of them gets it.
LAUNCHED_NAMES=()
LAUNCHED_PIDS=()
launch() {
    local name="$1"; shift
    "$@" >"$OUT/$name.log" 2>&1 &
    LAUNCHED_NAMES+=("$name")
    LAUNCHED_PIDS+=("$!")
}
# Ticks of each launched process now into the array named $1, its threads' into OUT/NAME.$2; fails (saying "ended
# $3") when one has ended.
sample_launched() {
    local -n into="$1"
    local i pid name
    for i in "${!LAUNCHED_PIDS[@]}"; do
        pid="${LAUNCHED_PIDS[$i]}"; name="${LAUNCHED_NAMES[$i]}"
        if ! kill -0 "$pid" 2>/dev/null; then echo "$name ended $3:" >&2; tail -5 "$OUT/$name.log" >&2; return 1; fi
        into[i]=$(ticks "$pid"); thread_ticks "$pid" >"$OUT/$name.$2"
    done
}
measure_launched() {
    local i pid
    local -a c0=() c1=()
    sleep "$WARM"
    sample_launched c0 t0 early
    sleep "$SECS"
    sample_launched c1 t1 "inside the window"
    for pid in "${LAUNCHED_PIDS[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
    for pid in "${LAUNCHED_PIDS[@]}"; do wait "$pid" || true; done
    for i in "${!LAUNCHED_PIDS[@]}"; do report_window "${LAUNCHED_NAMES[$i]}" "${c0[$i]}" "${c1[$i]}"; done
    LAUNCHED_NAMES=()
    LAUNCHED_PIDS=()
}

# An awk function for reports: half95(v, n) is the half-width of the 95 % interval of the mean of v[1..n] (Student
# t, two-sided: rounds are few), and leaves their standard deviation in `sd`. Use as awk "$HALF95_AWK"'...'.
HALF95_AWK='
function half95(v, n,    i, m, ss, t) {
    for (i = 1; i <= n; i++) m += v[i]; m /= n
    for (i = 1; i <= n; i++) ss += (v[i] - m) ^ 2; sd = sqrt(ss / (n - 1))
    split("12.71 4.30 3.18 2.78 2.57 2.45 2.36 2.31 2.26 2.23 2.20 2.18 2.16 2.14 2.13 2.12 2.11 2.10 2.09 2.09", t, " ")
    return (n - 1 <= 20 ? t[n - 1] : (n - 1 <= 30 ? 2.05 : 2.00)) * sd / sqrt(n)
}
'

# For the benches that start one `pipcompose run` at a time (PID) and talk to it with a token: OUT (a temp dir),
# stop_server (SIGINT, then waits for it), both undone at exit; BIN (the release binary unless set) and TOKEN.
server_bench_setup() {
    OUT="$(mktemp -d)"
    PID=""
    trap 'stop_server; rm -rf "$OUT"' EXIT
    if [ -z "${BIN:-}" ]; then release_binary; fi
    TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
}
stop_server() { [ -n "$PID" ] && kill -INT "$PID" 2>/dev/null && wait "$PID" || true; PID=""; }
