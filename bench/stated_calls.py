#!/usr/bin/env python3
"""Web calls on a stated frame, read back from a recording (issue 51): a live run records a 320x180@30 scene whose
web widget turns the colour it is given; CALLS calls of `update` are made over the control API, each for a frame
FRAMES_AHEAD ahead of the frame `status` says, alternating green and blue; the recording is decoded (ffmpeg), each
frame's strip number read (`probe`), and the frame each colour first shows in is compared with the frame asked.
Prints one line per call that landed elsewhere and a summary; exits 1 unless every call landed on its frame.

Usage: python3 bench/stated_calls.py BIN [CALLS] [FRAMES_AHEAD]"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

BIN = sys.argv[1]
CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 100
AHEAD = int(sys.argv[3]) if len(sys.argv) > 3 else 15
W, H = 320, 180
COLOURS = ["#00ff00", "#0000ff"]

work = tempfile.mkdtemp(prefix="stated-calls-")
scene = os.path.join(work, "scene.yaml")
with open(scene, "w") as f:
    f.write("""size: 320x180
fps: 30
background: "#000000"
widgets:
  - {id: strip, type: timecode, place: {edge: top, size: 0.1}}
  - id: lower
    type: web
    html: "<body style='margin:0;background:#ff0000'><script>function update(s){ const d = typeof s === 'string' ? JSON.parse(s) : s; document.body.style.background = d.color; }</script></body>"
    place: fill
""")
record = os.path.join(work, "calls.mkv")
run = subprocess.Popen([BIN, "run", scene, "--record", record, "--control", "127.0.0.1:0"], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
base = token = None
while base is None or token is None:
    line = run.stdout.readline()
    if not line:
        sys.exit("pipcompose run ended before its control API came up")
    if line.startswith("control "):
        base = line.split()[1]
    m = re.match(r"token (\S+)", line)
    if m:
        token = open(m.group(1)).read().strip()


def api(method, path, body=None):
    req = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


# The page has drawn once it answers a call.
deadline = time.time() + 60
while api("POST", "/v1/web/lower", {"call": "update", "data": {"color": "#ff0000"}})[0] != 200:
    if time.time() > deadline:
        sys.exit("the page never answered")
    time.sleep(0.2)
asked = []
for i in range(CALLS):
    frame = api("GET", "/v1/status")[1]["frame"] + AHEAD
    status, answer = api("POST", "/v1/web/lower", {"call": "update", "data": {"color": COLOURS[i % 2]},
                                                  "at": {"frame": frame}})
    if status != 200:
        sys.exit(f"call {i} for frame {frame} refused: {status} {answer}")
    asked.append(frame)
    # The next call once this one's frame has passed (each change shows in a frame of its own).
    deadline = time.time() + 30
    while api("GET", "/v1/status")[1]["frame"] < frame + 3:
        if time.time() > deadline:
            sys.exit(f"the run did not reach frame {frame + 3} within 30 s")
        time.sleep(0.02)
run.stdin.close()
run.send_signal(2)
run.wait(timeout=60)

# Strip numbers of the decoded frames (probe), and each frame's colour where the page is.
probe = json.loads(subprocess.run([BIN, "probe", "--json", "--quiet", record], capture_output=True, text=True).stdout)
first, dropped = probe["total"]["firstFrame"], probe["total"]["dropped"]
raw = subprocess.run(["ffmpeg", "-v", "error", "-i", record, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                     capture_output=True).stdout
size, at = W * H * 3, 3 * (W * 120 + 160)
colours = []
for o in range(0, len(raw) - size + 1, size):
    r, g, b = raw[o + at], raw[o + at + 1], raw[o + at + 2]
    colours.append("G" if g > 200 and r < 60 and b < 60 else "B" if b > 200 and r < 60 and g < 60 else
                   "R" if r > 200 and g < 60 else "?")
landed = []
for i, frame in enumerate(asked):
    want = "GB"[i % 2]
    before = frame - first - 1
    # The first frame from just before the one asked on that shows this call's colour.
    start = max(0, before - AHEAD)
    hit = next((k for k in range(start, len(colours)) if colours[k] == want and (k == 0 or colours[k - 1] != want)), None)
    landed.append(None if hit is None else first + hit)
off = [(i, a, l) for i, (a, l) in enumerate(zip(asked, landed)) if a != l]
for i, a, l in off:
    print(f"call {i}: asked frame {a}, first shown in {l}")
print(f"{CALLS} calls, each {AHEAD} frames ahead: {CALLS - len(off)} landed on the frame asked, {len(off)} elsewhere; "
      f"recording frames {first}..{first + len(colours) - 1}, dropped {dropped}")
sys.exit(1 if off or dropped else 0)
