#!/usr/bin/python3
"""How soon a viewer sees what a web widget's page was told: the time from `update(data)` (POST /v1/web/ID) to
the first decoded frame that shows it, and from a resize (POST /v1/resize) to the first decoded frame at the new
size whose page shows its re-laid layout (its CSS media query). A GStreamer viewer reads the RTSP stream over TCP
(no jitter buffer) and looks at the page's pixels in every frame, so each figure includes encoding, sending and
decoding (about 5-10 ms on loopback: bench/glass.sh). Prints p50/p99/max in ms and in frame intervals.

Usage: /usr/bin/python3 bench/web_latency.py BINARY [--count N] [--fps F]
"""
import argparse, json, os, secrets, socket, subprocess, sys, tempfile, threading, time, urllib.request
import gi
gi.require_version("Gst", "1.0")
from gi.repository import Gst

PAGE = """<!doctype html><html><head><style>
html, body { margin: 0; width: 100%; height: 100%; overflow: hidden }
#fill { position: absolute; inset: 0; background: #000000 }
#corner { position: absolute; right: 0; bottom: 0; width: 40%; height: 40%; background: #0000ff }
@media (max-width: 400px) { #corner { background: #00ff00 } }
</style></head><body><div id="fill"></div><div id="corner"></div>
<script>function update(d) { document.getElementById("fill").style.background = JSON.parse(d).c; }</script>
</body></html>"""
PALETTE = [(255, 0, 0), (255, 255, 0), (255, 0, 255), (0, 255, 255), (255, 255, 255), (128, 0, 0)]


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


class Viewer:
    """Decodes the stream; keeps the last frame's size and two pixels, and wakes waiters on each frame."""
    def __init__(self, url):
        self.cond = threading.Condition()
        self.frame = None
        p = Gst.parse_launch(f"rtspsrc location={url} latency=0 protocols=tcp ! rtph264depay ! avdec_h264 "
                             "! videoconvert ! video/x-raw,format=RGB ! appsink name=out emit-signals=true sync=false "
                             "max-buffers=2 drop=true")
        p.get_by_name("out").connect("new-sample", self.sample)
        self.pipeline = p
        p.set_state(Gst.State.PLAYING)

    def sample(self, sink):
        s = sink.emit("pull-sample")
        caps = s.get_caps().get_structure(0)
        w, h = caps.get_value("width"), caps.get_value("height")
        buf = s.get_buffer()
        ok, m = buf.map(Gst.MapFlags.READ)
        stride = (w * 3 + 3) & ~3
        def px(x, y):
            o = y * stride + x * 3
            return tuple(m.data[o:o + 3])
        frame = (time.monotonic(), (w, h), px(w // 4, h // 4), px(w - w // 8, h - h // 8))
        buf.unmap(m)
        with self.cond:
            self.frame = frame
            self.cond.notify_all()
        return Gst.FlowReturn.OK

    def wait(self, since, match, timeout=5):
        """The time of the first frame after `since` for which match(frame) holds, or None."""
        end = time.monotonic() + timeout
        with self.cond:
            while time.monotonic() < end:
                f = self.frame
                if f and f[0] >= since and match(f):
                    return f[0]
                self.cond.wait(timeout=0.5)
        return None


def near(a, b, tol=40):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def summary(name, values, fps):
    values = sorted(values)
    if not values:
        return {"bench": name, "samples": 0}
    q = lambda p: values[min(len(values) - 1, int(p * len(values)))]
    interval = 1000 / fps
    return {"bench": name, "samples": len(values), "p50Ms": round(q(0.5), 1), "p90Ms": round(q(0.9), 1), "p99Ms": round(q(0.99), 1),
            "maxMs": round(values[-1], 1), "p50Frames": round(q(0.5) / interval, 2), "p99Frames": round(q(0.99) / interval, 2)}


def main():
    a = argparse.ArgumentParser()
    a.add_argument("binary")
    a.add_argument("--count", type=int, default=100)
    a.add_argument("--fps", type=int, default=30)
    args = a.parse_args()
    Gst.init(None)
    work = tempfile.mkdtemp()
    open(os.path.join(work, "page.html"), "w").write(PAGE)
    open(os.path.join(work, "scene.yaml"), "w").write(
        "size: 640x360\nlayout: {padding: 0, gap: 0}\nwidgets:\n  - {id: page, type: web, source: page.html, place: fill}\n")
    cport, rport, token = free_port(), free_port(), secrets.token_hex(16)
    run = subprocess.Popen([args.binary, "run", os.path.join(work, "scene.yaml"), "--fps", str(args.fps),
                            "--control", f"127.0.0.1:{cport}", "--control-token", token,
                            "--rtsp", f"127.0.0.1:{rport}/pip"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in run.stdout:
        if " fps" in line:
            break
    base = f"http://127.0.0.1:{cport}"

    def post(path, body):
        req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=10).read()

    viewer = Viewer(f"rtsp://127.0.0.1:{rport}/pip")
    try:
        if viewer.wait(0, lambda f: near(f[3], (0, 0, 255)), timeout=60) is None:
            sys.exit("the page never showed")
        updates, resizes = [], []
        for i in range(args.count):
            colour = PALETTE[i % len(PALETTE)]
            t0 = time.monotonic()
            post("/v1/web/page", {"call": "update", "data": json.dumps({"c": "#%02x%02x%02x" % colour})})
            t = viewer.wait(t0, lambda f: near(f[2], colour))
            if t is not None:
                updates.append((t - t0) * 1000)
            time.sleep(0.2)
        sizes = [((320, 180), (0, 255, 0)), ((640, 360), (0, 0, 255))]
        for i in range(max(1, args.count // 5)):
            size, corner = sizes[i % 2]
            t0 = time.monotonic()
            post("/v1/resize", {"size": "%dx%d" % size})
            t = viewer.wait(t0, lambda f: f[1] == size and near(f[3], corner))
            if t is not None:
                resizes.append((t - t0) * 1000)
            time.sleep(0.5)
        # The first update is reported apart: the page's script meets it cold (its first layout of new content).
        print(json.dumps(summary("web-update-to-viewer", updates[1:], args.fps)
                         | {"asked": args.count, "firstMs": round(updates[0], 1) if updates else None}))
        print(json.dumps(summary("web-resize-to-viewer", resizes, args.fps) | {"asked": max(1, args.count // 5)}))
    finally:
        viewer.pipeline.set_state(Gst.State.NULL)
        run.terminate()
        run.wait(timeout=30)


if __name__ == "__main__":
    main()
