"""Debian's Chromium, headless, driven by Selenium through chromedriver: what the browser fixtures share."""
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def browser(profile, window, extra=()):
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--autoplay-policy=no-user-gesture-required", f"--window-size={window.replace('x', ',')}",
                 f"--user-data-dir={profile}",
                 # ICE on loopback: Chromium gathers nothing on a machine with only `lo`, or hides its addresses
                 # behind mDNS names, without these two.
                 "--allow-loopback-in-peer-connection", "--disable-features=WebRtcHideLocalIpsWithMdns", *extra]:
        o.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)


def until(driver, script, timeout, what):
    """Polls `script` in the page until it returns something true; its value, or TimeoutError after `timeout` s."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = driver.execute_script(script)
        if v:
            return v
        time.sleep(0.1)
    raise TimeoutError(f"{what} within {timeout} s")
