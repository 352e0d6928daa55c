#!/usr/bin/python3
"""The browser's Picture-in-Picture window as a viewer has it: Debian's Chromium, headless, on pipcompose's live page.

Two things, each optional, in this order:

- The Media Session (--media): what the page told the browser (navigator.mediaSession's metadata and playback state,
  the position state and the actions offered, as the page keeps them in window.pipMedia), the cover fetched as the
  browser would, then each --act NAME invoked as the browser invokes it (a PiP window's buttons cannot be clicked by
  WebDriver) and what it did: to the run (its status, read with --status-token) or to this page's own player.
  --title ID=TEXT changes the now-playing card ID's title through the API and waits for the page's metadata to follow.
- The pop-out (--popout WxH): "follow this window" on (its own picture), the "Pop out" button clicked, the floating
  window (Document Picture-in-Picture) made so its video is WxH (Chrome DevTools' window bounds), and timed until the
  stream is that size; the strip's frame numbers across the switch; --popout-screenshot of the window; then closed
  (--close, or --close-early: before its picture comes) and the video back in the page, playing its size again.
  With --no-document-pip the browser lacks the API (as another browser would): the button falls back to the video
  element's PiP and says why.

Prints one JSON object: what the page and the run showed.

Usage: pip_window.py URL [--media] [--act NAME]... [--title ID=TEXT] [--popout WxH] [--popout-screenshot PNG]
                        [--close | --close-early] [--no-document-pip] [--status-token TOKEN] [--timeout S]
                        [--until-file F] [--done-file F]
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
from web_viewer import follow


class Run:
    """The run behind the page, read and driven with the owner's token."""

    def __init__(self, page_url, token):
        u = urllib.parse.urlsplit(page_url)
        self.base = f"{u.scheme}://{u.netloc}"
        self.token = token

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Authorization": "Bearer " + self.token,
                                              **({"Content-Type": "application/json"} if data else {})})
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.load(r)

    def status(self):
        return self.call("GET", "/v1/status")

    def wait(self, test, timeout, what):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            s = self.status()
            if test(s):
                return s
            time.sleep(0.1)
        raise TimeoutError(f"{what} within {timeout} s")


def media_state(d):
    return d.execute_script("const m = window.pipMedia; if (!m || !m.np) return null;"
                            "const s = navigator.mediaSession;"
                            "return { metadata: m.metadata, offered: m.offered, state: m.state, refused: m.refused,"
                            "  position: { ...m.position, duration: String(m.position.duration) },"
                            "  browser: { title: s.metadata && s.metadata.title, artist: s.metadata && s.metadata.artist,"
                            "             album: s.metadata && s.metadata.album, playbackState: s.playbackState,"
                            "             artwork: s.metadata ? [...s.metadata.artwork].map((a) => a.src) : [] } }")


def fetch_artwork(d):
    """The cover as the browser fetches it: its status, type and size once decoded."""
    return d.execute_async_script(
        "const done = arguments[arguments.length - 1], a = window.pipMedia.metadata.artwork;"
        "if (!a.length) return done(null);"
        "fetch(a[0].src).then(async (r) => { const b = await r.blob();"
        "  let size = null; try { const i = await createImageBitmap(b); size = [i.width, i.height]; } catch (e) {}"
        "  done({ status: r.status, type: r.headers.get('content-type'), size }); })"
        ".catch((e) => done({ error: String(e) }));")


def act(d, run, name, out):
    """Invokes handler NAME as the browser would, and waits for what it should do."""
    video = "document.querySelector('video')"
    watching = d.execute_script("return document.body.classList.contains('watch')")
    before = run.status() if run else None
    handled = d.execute_script(f"return window.pipMedia.act('{name}', {{}})")
    seen = {"action": name, "handled": handled}
    if handled:
        try:
            if watching and name in ("pause", "play"):
                until(d, f"return {video}.paused === {'true' if name == 'pause' else 'false'}", 10,
                      f"this player did not {name}")
            elif name in ("pause", "play"):
                state = "paused" if name == "pause" else "playing"
                run.wait(lambda s: s["state"] == state, 10, f"the run did not {name}")
                until(d, f"return window.pipMedia.state === '{state}'", 10, f"the buttons did not show {state}")
            elif name in ("seekforward", "seekbackward") and before["live"]:
                # A live scene skips within the music: to 15 s on or back in the file heard, or to the next file.
                was = before["music"]
                target = max(0, was["position"] + (15 if name == "seekforward" else -15))
                run.wait(lambda s: s["music"]["index"] != was["index"] or abs(s["music"]["position"] - target) < 3, 10,
                         f"the music did not {name}")
            elif name in ("seekforward", "seekbackward"):
                target = max(0, before["sceneTime"] + (15 if name == "seekforward" else -15))
                run.wait(lambda s: abs(s["sceneTime"] - target) < 3, 10, f"the scene did not {name}")
            elif name in ("nexttrack", "previoustrack"):
                run.wait(lambda s: s["music"]["index"] != before["music"]["index"], 10, f"the music did not {name}")
        except TimeoutError as e:
            seen["error"] = str(e)
    if run:
        s = run.status()
        seen["run"] = {"state": s["state"], "sceneTime": s["sceneTime"], "music": s.get("music")}
        if before:
            seen["before"] = {"state": before["state"], "sceneTime": before["sceneTime"], "music": before.get("music")}
    seen["videoPaused"] = d.execute_script(f"return {video}.paused")
    seen["pageState"] = d.execute_script("return window.pipMedia.state")
    out.setdefault("acts", []).append(seen)


def popout_target(d):
    infos = d.execute_cdp_cmd("Target.getTargets", {})["targetInfos"]
    return next(t for t in infos if t.get("openerId") and t["type"] == "page")


def popout(d, args, out):
    w, h = (int(x) for x in args.popout.split("x"))
    follow(d, "own")
    d.find_element("id", "popout").click()
    if args.no_document_pip:
        try:
            until(d, "return document.pictureInPictureElement !== null", 10, "the video's own PiP did not open")
            out["fellBack"] = True
        except TimeoutError as e:
            out["error"] = str(e)
        out["note"] = d.execute_script("return document.getElementById('note').textContent")
        out["fallback"] = d.execute_script("return window.pipPop.fallback")
        return
    try:
        until(d, "return window.pipPop.window !== null", 10, "the pop-out did not open")
    except TimeoutError as e:
        out["error"] = str(e)
        out["pageError"] = d.execute_script("return document.getElementById('error').textContent")
        return
    inner = d.execute_script("const p = window.pipPop.window; return [p.innerWidth, p.innerHeight, p.devicePixelRatio,"
                             "p.document.getElementById('strip').offsetHeight]")
    out["popoutOpened"] = {"inner": inner[:2], "dpr": inner[2], "strip": inner[3],
                           "videoInside": d.execute_script("return document.querySelector('video') === null")}
    target = popout_target(d)
    window = d.execute_cdp_cmd("Browser.getWindowForTarget", {"targetId": target["targetId"]})
    outer = window["bounds"]
    dpr, strip = inner[2], inner[3]
    bounds = {"width": round(w / dpr) + outer["width"] - inner[0],
              "height": round(h / dpr) + strip + outer["height"] - inner[1]}
    read = d.execute_script("return window.pipStats.readable")
    before = d.execute_script("const s = window.pipStats; return { repeated: s.repeated, dropped: s.dropped }")
    asked = time.monotonic()
    d.execute_cdp_cmd("Browser.setWindowBounds", {"windowId": window["windowId"], "bounds": bounds})
    if args.close_early:
        d.execute_script("window.pipPop.close()")
    else:
        try:
            until(d, f"const v = window.pipPop.window && window.pipPop.window.document.querySelector('video');"
                     f"return v && v.videoWidth === {w} && v.videoHeight === {h}", args.timeout,
                  f"the pop-out's stream did not become {w}x{h}")
            out["resizeSeconds"] = time.monotonic() - asked
            until(d, f"return window.pipStats.readable >= {read + 30}", args.timeout, "no strips read at the new size")
            if args.done_file:
                open(args.done_file, "w").close()
        except TimeoutError as e:
            out["error"] = str(e)
            out["size"] = d.execute_script("return document.getElementById('size').textContent")
        after = d.execute_script("const s = window.pipStats; return { repeated: s.repeated, dropped: s.dropped,"
                                 "sizes: s.sizes }")
        out["switch"] = {"repeated": after["repeated"] - before["repeated"],
                         "dropped": after["dropped"] - before["dropped"], "sizes": after["sizes"]}
        out["popoutSize"] = d.execute_script("return document.getElementById('size').textContent")
        out["strip"] = d.execute_script("const d = window.pipPop.window.document;"
                                        "return { buttons: [...d.querySelectorAll('button')].filter((b) =>"
                                        "  b.style.display !== 'none').map((b) => b.id),"
                                        "  line: d.getElementById('line').textContent }")
        if args.until_file:
            end = time.monotonic() + args.timeout * 3
            while not os.path.exists(args.until_file) and time.monotonic() < end:
                time.sleep(0.1)
        if args.popout_screenshot:
            here = d.current_window_handle
            d.switch_to.window(target["targetId"])
            d.save_screenshot(args.popout_screenshot)
            d.switch_to.window(here)
        if args.close:
            d.execute_script("window.pipPop.close()")
    if args.close or args.close_early:
        try:
            until(d, "return window.pipPop.window === null && document.querySelector('#stage video') !== null", 10,
                  "the video did not come back to the page")
            stage = d.execute_script("const r = document.getElementById('video').getBoundingClientRect();"
                                     "return [Math.round(r.width), Math.round(r.height)]")
            until(d, f"const v = document.getElementById('video'); return v.videoWidth === {stage[0]}"
                     f" && v.videoHeight === {stage[1]} && !v.paused", args.timeout,
                  f"the page's video did not play its own size {stage[0]}x{stage[1]} again")
            out["back"] = {"stage": stage, "video": d.execute_script(
                "const v = document.getElementById('video'); return [v.videoWidth, v.videoHeight]")}
        except TimeoutError as e:
            out["error"] = str(e)
            out["size"] = d.execute_script("return document.getElementById('size').textContent")


def main():
    a = argparse.ArgumentParser()
    a.add_argument("url")
    a.add_argument("--media", action="store_true")
    a.add_argument("--act", action="append", default=[])
    a.add_argument("--title", help="ID=TEXT: the now-playing card's new title, set through the API")
    a.add_argument("--popout")
    a.add_argument("--popout-screenshot")
    a.add_argument("--close", action="store_true")
    a.add_argument("--close-early", action="store_true")
    a.add_argument("--no-document-pip", action="store_true")
    a.add_argument("--status-token")
    a.add_argument("--until-file", help="with --popout, keep the window open until this file exists")
    a.add_argument("--done-file", help="written once the pop-out plays its size (another viewer waits for it)")
    a.add_argument("--timeout", type=float, default=40)
    args = a.parse_args()
    run = Run(args.url, args.status_token) if args.status_token else None
    out = {"url": args.url}
    with tempfile.TemporaryDirectory() as profile:
        extra = ["--disable-blink-features=DocumentPictureInPictureAPI"] if args.no_document_pip else []
        d = browser(profile, "1200x900", extra)
        try:
            d.get(args.url)
            out["documentPictureInPicture"] = d.execute_script("return 'documentPictureInPicture' in window")
            until(d, "const v = document.getElementById('video');"
                     "return v.currentTime > 1 && v.videoWidth > 0 && window.pipMedia && window.pipMedia.np",
                  args.timeout, "the video did not play with the Media Session set")
            if args.media:
                out["media"] = media_state(d)
                out["artwork"] = fetch_artwork(d)
            if args.title:
                widget, text = args.title.split("=", 1)
                run.call("PATCH", f"/v1/widgets/{widget}", {"title": text})
                try:
                    until(d, f"return window.pipMedia.metadata.title === {json.dumps(text)}", 10,
                          "the Media Session's title did not follow the card")
                    out["titleFollowed"] = True
                except TimeoutError as e:
                    out["error"] = str(e)
            for name in args.act:
                act(d, run, name, out)
            if args.popout:
                popout(d, args, out)
            out["pageError"] = d.execute_script("return document.getElementById('error').textContent")
        except TimeoutError as e:
            out["error"] = str(e)
            out["pageError"] = d.execute_script("return document.getElementById('error').textContent")
        finally:
            d.quit()
    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
