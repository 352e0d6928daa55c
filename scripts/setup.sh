#!/usr/bin/env bash
# Installs the Debian packages pipcompose needs, for a purpose:
#   bash scripts/setup.sh [run]   building pipcompose and running it, the demo included (scripts/demo.sh)
#   bash scripts/setup.sh test    that, and the real clients, servers and browser the tests and benchmarks drive
#                                 (scripts/test.sh, .ci/run, bench/all.sh)
# Idempotent and quiet: when everything is present it prints nothing, installs nothing and touches no package list.
# Run as root, or with sudo available.
set -euo pipefail

PURPOSE="${1:-run}"

RUN_PACKAGES=(
    # build: C headers reached through the CGst, CPango, CRsvg and CGio modules (Package.swift)
    pkg-config
    libglib2.0-dev
    libgstreamer1.0-dev
    libgstreamer-plugins-base1.0-dev
    libgstreamer-plugins-bad1.0-dev
    libgstrtspserver-1.0-dev
    libcairo2-dev
    libpango1.0-dev
    librsvg2-dev
    libgdk-pixbuf-2.0-dev
    # run: plugins for conversion, encoding, muxing, decoding video layers and music, RTSP, RTMP, SRT
    gstreamer1.0-plugins-base
    gstreamer1.0-plugins-good
    gstreamer1.0-plugins-bad
    gstreamer1.0-plugins-ugly
    gstreamer1.0-libav
    gstreamer1.0-rtsp
    gstreamer1.0-tools
    gstreamer1.0-x
    # WebRTC (run --webrtc): webrtcbin is in plugins-bad, but its ICE transport (nicesrc/nicesink) is packaged apart
    gstreamer1.0-nice
    # web widgets (type: web): WPE WebKit's wpesrc, rendering with Mesa's software GL (no GPU or display needed)
    gstreamer1.0-wpe
    libgl1-mesa-dri
    x264
    # fonts: Latin, CJK, Arabic and colour emoji, for Pango's fallback
    fonts-dejavu-core
    fonts-noto-core
    fonts-noto-cjk
    fonts-noto-color-emoji
    fontconfig
)

TEST_PACKAGES=(
    # real clients and decoders (ffmpeg, ffprobe), an RTMP server to push to, a timer for CPU figures
    ffmpeg
    nginx-light
    libnginx-mod-rtmp
    time
    # the RTSP RECORD server and D-Bus fixtures: gst-rtsp-server from Python, a session bus for MPRIS
    python3-gi
    gir1.2-gst-rtsp-server-1.0
    dbus-daemon
    # a real Prometheus for the fleet test: it scrapes probes' /metrics and evaluates deploy/prometheus's rules
    prometheus
    # a real Janus (its streaming plugin takes run --push rtp://) and its janus.js for the viewer page
    janus
    libjs-janus-gateway
    # an HLS playlist parser (RFC 8216) for the ladder's test
    python3-m3u8
    # a real browser for the WebRTC page's tests: headless Chromium driven by Selenium
    chromium
    chromium-driver
    python3-selenium
    # a real TURN server for the tests of --ice-server and --turn-secret (coturn's use-auth-secret), and openssl to
    # make the certificates of the HTTPS tests
    coturn
    openssl
    # the NATs of the network-namespace test (masquerade, fully-random)
    nftables
    iproute2
    # a WebRTC stack that is not ours (aiortc, from PyPI) for the WHEP tests, in a venv of its own (below)
    python3-venv
)

# aiortc and its pinned version, installed from PyPI into this venv (it sees Debian's python3-gi too).
TEST_VENV=/opt/pipcompose-test-venv
AIORTC=aiortc==1.16.0

# Installs aiortc into TEST_VENV unless it is there already (quiet when it is).
test_venv() {
    if "$TEST_VENV/bin/python" -c 'import aiortc, sys; sys.exit(aiortc.__version__ != "'"${AIORTC#aiortc==}"'")' 2>/dev/null; then
        return 0
    fi
    echo "setup (test): installing $AIORTC into $TEST_VENV"
    $SUDO rm -rf "$TEST_VENV"
    $SUDO /usr/bin/python3 -m venv --system-site-packages "$TEST_VENV"
    $SUDO "$TEST_VENV/bin/pip" install -q --disable-pip-version-check "$AIORTC"
}

case "$PURPOSE" in
    run) PACKAGES=("${RUN_PACKAGES[@]}") ;;
    test) PACKAGES=("${RUN_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
    *) echo "usage: bash scripts/setup.sh [run|test]   (run: build and run pipcompose; test: that and the tests)" >&2
       exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

if [ "${#missing[@]}" -eq 0 ]; then
    if [ "$PURPOSE" = test ]; then test_venv; fi
    exit 0
fi

echo "setup ($PURPOSE): installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fc-cache -f >/dev/null 2>&1 || true
# Debian starts the servers it installs (Janus on every interface, Prometheus on :9090) where systemd runs; the
# tests start their own on loopback, so the ones installed just now for them are stopped and left disabled.
if [ -d /run/systemd/system ]; then
    for unit in janus prometheus coturn; do
        if printf '%s\n' "${missing[@]}" | grep -qx "$unit"; then $SUDO systemctl disable --now "$unit" >/dev/null 2>&1 || true; fi
    done
fi
if [ "$PURPOSE" = test ]; then test_venv; fi
echo "setup ($PURPOSE): done"
