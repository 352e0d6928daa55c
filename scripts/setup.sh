#!/usr/bin/env bash
# Installs every Debian package pipcompose needs to build, run and test.
# Idempotent: when everything is present it installs nothing and touches no package list.
set -euo pipefail

PACKAGES=(
    # build: C headers reached through the CGst module
    pkg-config
    libgstreamer1.0-dev
    libgstreamer-plugins-base1.0-dev
    libgstreamer-plugins-bad1.0-dev
    libgstrtspserver-1.0-dev
    libcairo2-dev
    libpango1.0-dev
    librsvg2-dev
    libgdk-pixbuf-2.0-dev
    # run: plugins for conversion, encoding, muxing, RTSP, RTMP, SRT
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
    x264
    # fonts: Latin, CJK, Arabic and colour emoji, for Pango's fallback
    fonts-dejavu-core
    fonts-noto-core
    fonts-noto-cjk
    fonts-noto-color-emoji
    fontconfig
    # tests and benchmarks: real clients and decoders, an RTMP server to push to, a timer
    ffmpeg
    nginx-light
    libnginx-mod-rtmp
    python3-gi
    dbus-daemon
    gir1.2-gst-rtsp-server-1.0
    time
    # a real browser for the WebRTC page's tests: headless Chromium driven by Selenium
    chromium
    chromium-driver
    python3-selenium
)

missing=()
for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "setup: all ${#PACKAGES[@]} packages present"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fc-cache -f >/dev/null 2>&1 || true
echo "setup: done"
