#!/usr/bin/python3
"""The PiP windows of docs/BROWSERS.md, photographed: Chromium with a screen (Xvfb), not headless, since a headless
browser draws no Picture-in-Picture window of its own.

1. The browser's own PiP window of the live page's video, the pointer over it so it shows its controls: the Media
   Session's buttons (play/pause, ±seek) and metadata, and the scene's position. Taken from the screen (ImageMagick's
   import), cropped to the window.
2. The pop-out (Document Picture-in-Picture) with its control strip, made 480x270 + the strip: the window's own
   screenshot through WebDriver.

Usage: scripts/pip_screenshots.py PAGE_URL OUT_DIR   (PAGE_URL: `pipcompose ctl page` of a run with --webrtc)
Needs: apt-get install xvfb xdotool imagemagick chromium chromium-driver python3-selenium
"""
import os
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Tests", "Fixtures"))
from headless_chromium import until  # noqa: E402

DISPLAY = ":97"


def main():
    page, out = sys.argv[1], sys.argv[2]
    screen = subprocess.Popen(["Xvfb", DISPLAY, "-screen", "0", "1280x800x24"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    env = {**os.environ, "DISPLAY": DISPLAY}
    os.environ["DISPLAY"] = DISPLAY
    try:
        with tempfile.TemporaryDirectory() as profile:
            o = webdriver.ChromeOptions()
            o.binary_location = "/usr/bin/chromium"
            for flag in ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,760",
                         "--window-position=0,0", "--autoplay-policy=no-user-gesture-required",
                         f"--user-data-dir={profile}", "--allow-loopback-in-peer-connection",
                         "--disable-features=WebRtcHideLocalIpsWithMdns"]:
                o.add_argument(flag)
            d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
            try:
                d.get(page)
                until(d, "return window.pipMedia && window.pipMedia.np && document.getElementById('video').currentTime > 1",
                      40, "the page did not play")
                # 1. The browser's PiP window, the pointer over it.
                d.find_element("id", "pip").click()
                w, h = until(d, "const m = document.getElementById('size').textContent.match(/PiP window (\\d+)x(\\d+)/);"
                                "return m && [+m[1], +m[2]]", 10, "no PiP window")
                # Chromium puts it in the screen's bottom right corner, 16 pixels in.
                x, y = 1280 - 16 - w, 800 - 16 - h
                for dx in (0, 5):
                    # Over the picture, off its buttons (a button under the pointer shows a tooltip).
                    subprocess.run(["xdotool", "mousemove", str(x + w // 4 + dx), str(y + h // 2 + dx)], env=env, check=True)
                    time.sleep(0.5)  # the controls fade in on the pointer's movement: the picture is taken once they show
                whole = os.path.join(out, "screen.png")
                subprocess.run(["import", "-display", DISPLAY, "-window", "root", whole], check=True)
                subprocess.run(["convert", whole, "-crop", f"{w + 16}x{h + 16}+{x - 8}+{y - 8}",
                                os.path.join(out, "pip-window-controls.png")], check=True)
                os.remove(whole)
                d.execute_script("document.exitPictureInPicture()")
                # 2. The pop-out, 480x270 of video and its strip.
                d.execute_script("const f = document.getElementById('follow'); f.value = 'own';"
                                 "f.dispatchEvent(new Event('change'));")
                d.find_element("id", "popout").click()
                until(d, "return window.pipPop.window !== null", 10, "no pop-out")
                target = next(t for t in d.execute_cdp_cmd("Target.getTargets", {})["targetInfos"]
                              if t.get("openerId") and t["type"] == "page")
                window = d.execute_cdp_cmd("Browser.getWindowForTarget", {"targetId": target["targetId"]})
                inner = d.execute_script("const p = window.pipPop.window; return [p.innerWidth, p.innerHeight]")
                bounds = window["bounds"]
                d.execute_cdp_cmd("Browser.setWindowBounds", {"windowId": window["windowId"], "bounds": {
                    "width": 480 + bounds["width"] - inner[0], "height": 270 + 34 + bounds["height"] - inner[1]}})
                until(d, "const v = window.pipPop.window.document.querySelector('video');"
                         "return v.videoWidth === 480 && v.videoHeight === 270 && window.pipStats.p50 !== null", 40,
                      "the pop-out did not get its picture")
                until(d, "return window.pipPop.window.document.getElementById('line').textContent.includes('latency')",
                      10, "no latency line")
                d.switch_to.window(target["targetId"])
                d.save_screenshot(os.path.join(out, "popout-480x270.png"))
            finally:
                d.quit()
    finally:
        screen.terminate()
        screen.wait()


if __name__ == "__main__":
    main()
