#!/usr/bin/python3
"""Memory of a web widget's page over a long run: examples/web/scoreboard.html filling a 1280x720@30 picture,
told something new once a second (POST /v1/web/board, the clock and the score), with an RTSP viewer reading
the stream. Every 10 s it samples the resident memory of the page's processes (the `web-page` child and WebKit's
web and network processes under it, all in the child's session) and of pipcompose itself, and the pages' anonymous
memory (what they allocated, apart from the libraries and files they map). After a warm-up it
reports, in MiB: the first and last sample, the largest, and the growth by a least-squares line over the samples
(so one sample's noise does not decide it). Prints one JSON line; keeps every sample in OUT (CSV).

The page is renewed as it grows (`--web-renew-growth`, default 4 MiB; pass another with --renew-growth, 0 for none):
while a new launch starts beside the old one, the page's processes are twice as many, and the samples taken then
(a few seconds each time) count both launches. They are kept in the CSV and in pageMaxMiB; pageOneLaunchMaxMiB is the
largest of the samples with one launch. renewals is what `status` counted.

Usage: /usr/bin/python3 bench/web_soak.py BINARY [--seconds 1800] [--warmup 60] [--renew-growth MIB]
       [--out bench/out/web_soak.csv]
"""
import argparse, json, os, secrets, shutil, socket, subprocess, sys, tempfile, time, urllib.request
from session_cpu import child_sessions, name, processes

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def anonymous_kib(pid):
    """A process's anonymous memory (its heap and the like: what it made, not the libraries and files it maps, which
    count in its resident memory as they are paged in and can be dropped again), in KiB."""
    try:
        return next((int(l.split()[1]) for l in open(f"/proc/{pid}/smaps_rollup") if l.startswith("Anonymous:")), 0)
    except OSError:
        return 0


def sample(pid):
    """(pipcompose's own resident MiB, its pages' resident MiB summed over their processes, page processes, the
    pages' resident MiB by process name, the pages' anonymous MiB summed)."""
    table = processes()
    pages = child_sessions(pid, table)
    page = {p: rss for p, (_, sid, _, rss) in table.items() if sid in pages}
    by_name = {}
    for p, rss in page.items():
        by_name[name(p)] = by_name.get(name(p), 0) + rss / 1024
        by_name[name(p) + ":anon"] = by_name.get(name(p) + ":anon", 0) + anonymous_kib(p) / 1024
    anon = sum(anonymous_kib(p) for p in page) / 1024
    return table.get(pid, (0, 0, 0, 0))[3] / 1024, sum(page.values()) / 1024, len(page), by_name, anon


def slope_per_run(points, seconds):
    """Growth over `seconds` by the least-squares line through (t, value)."""
    n = len(points)
    if n < 2:
        return 0.0
    mt = sum(t for t, _ in points) / n
    mv = sum(v for _, v in points) / n
    den = sum((t - mt) ** 2 for t, _ in points)
    return 0.0 if den == 0 else sum((t - mt) * (v - mv) for t, v in points) / den * seconds


def main():
    a = argparse.ArgumentParser()
    a.add_argument("binary")
    a.add_argument("--seconds", type=int, default=1800)
    a.add_argument("--warmup", type=int, default=60)
    a.add_argument("--renew-growth", type=int, default=None)
    a.add_argument("--out", default=os.path.join(HERE, "out", "web_soak.csv"))
    args = a.parse_args()
    work = tempfile.mkdtemp()
    shutil.copy(os.path.join(HERE, "..", "examples", "web", "scoreboard.html"), work)
    open(os.path.join(work, "scene.yaml"), "w").write(
        "size: 1280x720\nfps: 30\nlayout: {padding: 0, gap: 0}\nwidgets:\n"
        "  - {id: board, type: web, source: scoreboard.html, place: fill}\n")
    cport, rport, token = free_port(), free_port(), secrets.token_hex(16)
    run = subprocess.Popen([args.binary, "run", os.path.join(work, "scene.yaml"), "--control", f"127.0.0.1:{cport}",
                            "--control-token", token, "--rtsp", f"127.0.0.1:{rport}/pip"]
                           + ([] if args.renew_growth is None else ["--web-renew-growth", str(args.renew_growth)]),
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in run.stdout:
        if " fps" in line:
            break
    viewer = subprocess.Popen(["gst-launch-1.0", "-q", "rtspsrc", f"location=rtsp://127.0.0.1:{rport}/pip",
                               "protocols=tcp", "!", "rtph264depay", "!", "avdec_h264", "!", "fakesink", "sync=false"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def status():
        req = urllib.request.Request(f"http://127.0.0.1:{cport}/v1/status", headers={"Authorization": "Bearer " + token})
        return json.loads(urllib.request.urlopen(req, timeout=10).read())

    def post(body):
        req = urllib.request.Request(f"http://127.0.0.1:{cport}/v1/web/board", data=json.dumps(body).encode(),
                                     method="POST", headers={"Authorization": "Bearer " + token,
                                                             "Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=10).read()

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    points, start, updates, failed, renewals = [], time.monotonic(), 0, 0, None
    try:
        with open(args.out, "w") as csv:
            csv.write("seconds,pipcompose_mib,page_mib,page_processes,by_process\n")
            next_sample = start + args.warmup
            while (now := time.monotonic()) < start + args.warmup + args.seconds:
                n = int(now - start)
                data = {"home": "LYN", "away": "BRA", "h": n // 60 % 10, "a": n // 90 % 10,
                        "clock": "%02d:%02d" % (n // 60 % 100, n % 60)}
                try:
                    post({"call": "update", "data": json.dumps(data)})
                    updates += 1
                except OSError:
                    failed += 1
                if now >= next_sample:
                    own, page, count, by_name, anon = sample(run.pid)
                    points.append((now - start, own, page, anon, count))
                    parts = " ".join(f"{k}={v:.1f}" for k, v in sorted(by_name.items()))
                    csv.write(f"{now - start:.0f},{own:.1f},{page:.1f},{count},{parts}\n")
                    csv.flush()
                    next_sample += 10
                time.sleep(max(0.0, 1 - (time.monotonic() - now)))
        renewals = (status().get("web") or [{}])[0].get("renewals")
    finally:
        viewer.terminate()
        run.terminate()
        run.wait(timeout=30)
    if not points:
        sys.exit("no samples")
    page = [(t, p) for t, _, p, _, _ in points]
    own = [(t, o) for t, o, _, _, _ in points]
    anon = [(t, a) for t, _, _, a, _ in points]
    one = min(c for *_, c in points)
    single = [p for _, _, p, _, c in points if c == one]
    print(json.dumps({
        "bench": "web-soak", "seconds": args.seconds, "updates": updates, "updatesFailed": failed,
        "samples": len(points), "pageFirstMiB": round(page[0][1], 1), "pageLastMiB": round(page[-1][1], 1),
        "pageMaxMiB": round(max(v for _, v in page), 1), "pageGrowthMiB": round(slope_per_run(page, args.seconds), 1),
        "pageOneLaunchMaxMiB": round(max(single), 1), "samplesWithTwoLaunches": len(points) - len(single),
        "renewals": renewals,
        "pageAnonymousFirstMiB": round(anon[0][1], 1), "pageAnonymousLastMiB": round(anon[-1][1], 1),
        "pageAnonymousGrowthMiB": round(slope_per_run(anon, args.seconds), 1),
        "pipcomposeFirstMiB": round(own[0][1], 1), "pipcomposeLastMiB": round(own[-1][1], 1),
        "pipcomposeGrowthMiB": round(slope_per_run(own, args.seconds), 1), "csv": args.out}))


if __name__ == "__main__":
    main()
