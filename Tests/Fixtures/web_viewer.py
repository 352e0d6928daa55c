#!/usr/bin/python3
"""A viewer in a real browser: Debian's Chromium, headless, driven by Selenium through chromedriver.

Opens pipcompose's live page (run --webrtc), waits until the video plays and the page reads the timecode strip,
optionally makes the video element a new size with "follow this window" on (its own picture, or the shared one
resized) and waits for the stream to follow, and keeps watching a while (--hold) to see whether it changes again,
takes a screenshot of the video element, then leaves (navigating away, which ends the WHEP session, or quitting the
browser outright). Prints one JSON object: what the page saw.

Usage: web_viewer.py URL [--seconds S] [--resize WxH] [--follow own|shared] [--hold S] [--screenshot PNG]
                        [--page-screenshot PNG] [--window WxH] [--pip] [--leave navigate|quit] [--timeout S]
                        [--trust-spki HASH] [--status-token TOKEN]
"""
import argparse
import json
import os
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from headless_chromium import browser, until


def webrtc_viewers(page_url, token=None):
    """The WebRTC sessions pipcompose counts now (its status, read with TOKEN, else the page's: a watch link's may
    not read it), None when unreadable."""
    u = urllib.parse.urlsplit(page_url)
    token = token or urllib.parse.parse_qs(u.query).get("token", [None])[0]
    req = urllib.request.Request(f"{u.scheme}://{u.netloc}/v1/status",
                                 headers={"Authorization": "Bearer " + token} if token else {})
    try:
        return json.load(urllib.request.urlopen(req, timeout=5)).get("webrtc", {}).get("viewers")
    except (OSError, ValueError):
        return None


def watch(d, seconds, out):
    """Waits until the video itself has played SECONDS more (its own clock, not ours); returns its times before and
    after. A video that does not is an error in OUT."""
    t0 = d.execute_script("return document.getElementById('video').currentTime")
    try:
        until(d, f"return document.getElementById('video').currentTime >= {t0 + seconds}",
              seconds * 3 + 10, f"the video did not play {seconds} s more")
    except TimeoutError as e:
        out["error"] = str(e)
    return [t0, d.execute_script("return document.getElementById('video').currentTime")]


def follow(d, mode):
    """Turns "follow this window" on, as a user picking it in the page's list would."""
    d.execute_script(f"const f = document.getElementById('follow'); f.value = '{mode}';"
                     "f.dispatchEvent(new Event('change'));")


def main():
    a = argparse.ArgumentParser()
    a.add_argument("url")
    a.add_argument("--seconds", type=float, default=3)
    a.add_argument("--resize")
    a.add_argument("--follow", choices=["own", "shared"], default="own",
                   help="with --resize or --pip: a picture of its own for the window, or the shared picture resized")
    a.add_argument("--hold", type=float, default=0, help="after --resize, watch S more seconds of video")
    a.add_argument("--until-file", help="after --resize, watch until this file exists (another viewer did its part)")
    a.add_argument("--screenshot")
    a.add_argument("--page-screenshot")
    a.add_argument("--window", default="1400x1000")
    a.add_argument("--pip", action="store_true", help="open Picture-in-Picture with follow on; report its window size")
    a.add_argument("--unmute", action="store_true", help="turn the page's sound on (a click, as a user would)")
    a.add_argument("--leave", choices=["navigate", "quit"], default="navigate")
    a.add_argument("--status-token", help="the token to read the status with when leaving (the owner's, for a watch "
                                          "link's page, which may not read it)")
    a.add_argument("--timeout", type=float, default=40)
    a.add_argument("--trust-spki", help="trust the HTTPS certificate whose public key has this SHA-256 (base64), as a "
                                        "browser trusts one its user added")
    args = a.parse_args()
    out = {"url": args.url}
    with tempfile.TemporaryDirectory() as profile:
        extra = [f"--ignore-certificate-errors-spki-list={args.trust_spki}"] if args.trust_spki else []
        d = browser(profile, args.window, extra)
        try:
            d.get(args.url)
            out["title"] = d.title
            # What the browser lets this page do: a secure context (https, or loopback) has Document PiP.
            out["secureContext"] = d.execute_script("return window.isSecureContext")
            out["documentPictureInPicture"] = d.execute_script("return 'documentPictureInPicture' in window")
            if d.execute_script("return !document.getElementById('video')"):
                out["body"] = d.execute_script("return document.body.innerText")[:500]
                print(json.dumps(out))
                return
            try:
                until(d, "const v = document.getElementById('video');"
                         "return v.currentTime > 1 && v.videoWidth > 0 && window.pipStats.readable > 10",
                      args.timeout, "the video did not play with a readable strip")
            except TimeoutError as e:
                out["error"] = str(e)
                out["page"] = d.execute_script("return document.getElementById('error').textContent + ' | ' + "
                                               "document.getElementById('state').textContent")
            if args.unmute:
                d.find_element("id", "sound").click()
            # Watch until the video itself has played SECONDS more (its own clock, not ours).
            out["currentTime"] = watch(d, args.seconds, out)
            out["videoWidth"], out["videoHeight"] = d.execute_script(
                "const v = document.getElementById('video'); return [v.videoWidth, v.videoHeight]")
            if args.resize:
                w, h = (int(x) for x in args.resize.split("x"))
                dpr = d.execute_script("return window.devicePixelRatio || 1")
                asked = time.monotonic()
                follow(d, args.follow)
                d.execute_script("const s = document.getElementById('stage');"
                                 f"s.style.width = '{w / dpr}px'; s.style.height = '{h / dpr}px';")
                try:
                    until(d, f"const v = document.getElementById('video'); return v.videoWidth === {w} && v.videoHeight === {h}",
                          args.timeout, f"the stream did not become {w}x{h}")
                    out["resizeSeconds"] = time.monotonic() - asked
                    # A second of pictures at the new size, read by the page.
                    read = d.execute_script("return window.pipStats.readable")
                    until(d, f"return window.pipStats.readable >= {read + 30}", args.timeout,
                          "the page read no strips at the new size")
                except TimeoutError as e:
                    out["error"] = str(e)
                if args.until_file:
                    end = time.monotonic() + args.timeout * 3
                    while not os.path.exists(args.until_file) and time.monotonic() < end:
                        time.sleep(0.1)
                    if not os.path.exists(args.until_file):
                        out["error"] = f"{args.until_file} did not appear"
                if args.hold:
                    watch(d, args.hold, out)
                out["resizedTo"] = d.execute_script(
                    "const v = document.getElementById('video'); return [v.videoWidth, v.videoHeight]")
                out["picture"] = d.execute_script("return window.pipPicture || null")
            if args.pip:
                follow(d, args.follow)
                d.find_element("id", "pip").click()
                try:
                    until(d, "return document.pictureInPictureElement !== null", 10, "Picture-in-Picture did not open")
                    w, h = until(d, "const s = document.getElementById('size').textContent;"
                                    "const m = s.match(/PiP window (\\d+)x(\\d+)/); return m ? [+m[1], +m[2]] : null",
                                 10, "the page did not see the PiP window's size")
                    out["pipWindow"] = [w, h]
                    until(d, f"const v = document.getElementById('video'); return v.videoWidth === {w} && v.videoHeight === {h}",
                          args.timeout, f"the stream did not follow the PiP window to {w}x{h}")
                    out["followedPip"] = True
                except TimeoutError as e:
                    out["error"] = str(e)
                    out["pageError"] = d.execute_script("return document.getElementById('error').textContent")
            if args.screenshot:
                d.find_element("id", "video").screenshot(args.screenshot)
            if args.page_screenshot:
                # The picture once the page shows its figures: a stats line and the session's state.
                until(d, "return document.getElementById('stats').textContent.includes('fps') &&"
                         "document.getElementById('state').textContent.includes('viewer')", 10, "the page showed no figures")
                d.save_screenshot(args.page_screenshot)
            # What the page offers this link: the controls (a watch link gets none) and its ways to follow a window.
            out["controls"] = d.execute_script("return document.getElementById('play').offsetParent !== null")
            out["followOptions"] = d.execute_script(
                "return [...document.getElementById('follow').options].map((o) => o.value)")
            s = d.execute_script("return window.pipStats")
            s.pop("latencies", None)
            out["stats"] = s
            out["note"] = d.execute_script("return document.getElementById('note').textContent")
            out["pageError"] = d.execute_script("return document.getElementById('error').textContent")
            if args.leave == "navigate":
                # Leaving the page sends its DELETE; wait until the server counts one viewer fewer.
                before = webrtc_viewers(args.url, args.status_token)
                d.get("about:blank")
                end = time.monotonic() + 10
                while (before is not None and time.monotonic() < end
                       and (webrtc_viewers(args.url, args.status_token) or 0) >= before):
                    time.sleep(0.1)
        finally:
            d.quit()
    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
