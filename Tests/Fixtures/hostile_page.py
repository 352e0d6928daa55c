#!/usr/bin/python3
"""A hostile web page in a real browser (Debian's Chromium, headless, through Selenium) against pipcompose's API.

Serves a page from a second local HTTP server (another origin: http://localhost:PORT against the API's
http://127.0.0.1:PORT), opens it, and lets it try what any page on the web can try without the token: "simple"
requests with no preflight (fetch with mode no-cors and a text/plain JSON body, a form posted with enctype
text/plain), an <img> of the picture, an EventSource on the events, CORS reads, a PATCH. Prints one JSON object:
what each attempt got as the page can see it.

Usage: hostile_page.py API_BASE --record PATH [--form-record PATH] [--timeout S]
"""
import argparse
import http.server
import json
import sys
import tempfile
import threading

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

PAGE = """<!doctype html><meta charset="utf-8"><title>cat pictures</title>
<iframe name="sink" id="sink"></iframe>
<form id="form" method="POST" enctype="text/plain" target="sink" action="API/v1/outputs">
  <input name='{"record":"FORM_RECORD","x":"' value='"}'>
</form>
<script>
"use strict";
const api = "API";
const results = {};
window.results = results;
window.done = false;

// Settles after the event or the bound, whichever comes first: a refused request may never fire one.
function within(ms, start) {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve("no event in " + ms + " ms"), ms);
    start((v) => { clearTimeout(t); resolve(v); });
  });
}
async function attempt(name, f) {
  try { results[name] = await f(); } catch (e) { results[name] = "threw " + e.name; }
}

(async () => {
  // Simple requests: sent without asking the server first; the page cannot read the answer, only cause effects.
  await attempt("recordNoCors", async () => {
    const r = await fetch(api + "/v1/outputs", { method: "POST", mode: "no-cors",
      headers: { "Content-Type": "text/plain" }, body: JSON.stringify({ record: "RECORD", overwrite: true }) });
    return "sent (" + r.type + ")";
  });
  await attempt("resizeNoCors", async () => {
    const r = await fetch(api + "/v1/resize", { method: "POST", mode: "no-cors",
      headers: { "Content-Type": "text/plain" }, body: JSON.stringify({ size: "320x180" }) });
    return "sent (" + r.type + ")";
  });
  await attempt("pauseNoCors", async () => {
    const r = await fetch(api + "/v1/pause", { method: "POST", mode: "no-cors" });
    return "sent (" + r.type + ")";
  });
  await attempt("pushNoCors", async () => {
    const r = await fetch(api + "/v1/outputs", { method: "POST", mode: "no-cors",
      headers: { "Content-Type": "text/plain" }, body: JSON.stringify({ push: "rtmp://127.0.0.1:1/live/stolen" }) });
    return "sent (" + r.type + ")";
  });
  // A form: the oldest way to post JSON across origins (the body reads {"record":"…","x":"="}).
  await attempt("form", () => within(10000, (done) => {
    document.getElementById("sink").onload = () => done("loaded");
    document.getElementById("form").submit();
  }));
  // Reads: the picture, the event stream, the status.
  await attempt("image", () => within(10000, (done) => {
    const img = new Image();
    img.onload = () => done("loaded " + img.naturalWidth + "x" + img.naturalHeight);
    img.onerror = () => done("error");
    img.src = api + "/v1/frame.png";
  }));
  await attempt("events", () => within(10000, (done) => {
    const es = new EventSource(api + "/v1/events");
    let messages = 0;
    es.onmessage = () => { messages += 1; };
    es.onopen = () => done("open");
    es.onerror = () => { es.close(); done("error after " + messages + " messages"); };
  }));
  await attempt("statusRead", async () => {
    const r = await fetch(api + "/v1/status");
    return "read " + r.status + " " + (await r.text()).slice(0, 80);
  });
  await attempt("widgetPatch", async () => {
    const r = await fetch(api + "/v1/widgets/memo", { method: "PATCH",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify({ text: "owned" }) });
    return "answered " + r.status;
  });
  window.done = true;
})();
</script>
"""


def browser(profile):
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--user-data-dir={profile}"]:
        o.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)


def main():
    a = argparse.ArgumentParser()
    a.add_argument("api")
    a.add_argument("--record", required=True, help="the file the page tries to have recorded over")
    a.add_argument("--form-record", required=True, help="the file the page's form tries to have recorded")
    a.add_argument("--timeout", type=float, default=60)
    args = a.parse_args()
    page = (PAGE.replace("API", args.api.rstrip("/")).replace("FORM_RECORD", args.form_record)
            .replace("RECORD", args.record)).encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *_):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    origin = f"http://localhost:{server.server_address[1]}/"
    with tempfile.TemporaryDirectory() as profile:
        driver = browser(profile)
        try:
            driver.get(origin)
            WebDriverWait(driver, args.timeout, poll_frequency=0.1).until(
                lambda d: d.execute_script("return window.done === true"))
            results = driver.execute_script("return window.results")
        finally:
            driver.quit()
            server.shutdown()
    results["origin"] = origin
    print(json.dumps(results))


if __name__ == "__main__":
    sys.exit(main())
