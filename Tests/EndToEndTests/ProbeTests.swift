import Foundation
import Testing
import TestSupport

/// A scene whose frames carry the timecode strip.
func timecodeScene(_ dir: TempDir) throws -> String {
    try dir.write("timecode.yaml", """
    title: Probe source
    size: 640x360
    fps: 30
    widgets:
      - id: strip
        type: timecode
        place: {edge: top, size: 0.12}
      - id: label
        type: text
        text: probe me
        place: fill
    """)
}

/// Runs `pipcompose probe … --json --quiet` and returns its exit status and the report's `total`.
func probe(_ args: [String], timeout: TimeInterval = 60) throws -> (status: Int32, total: [String: Any], out: String, err: String) {
    let r = try tool([binary, "probe", "--json", "--quiet"] + args, timeout: timeout)
    let json = (try? JSONSerialization.jsonObject(with: Data(r.out.utf8))) as? [String: Any]
    return (r.status, (json?["total"] as? [String: Any]) ?? [:], r.out, r.err)
}

extension EndToEnd {
    @Suite(.serialized) struct ProbeTests {
        /// Frames a pattern (`every:N` or `burst:K/N`, as pipcompose reads them) leaves out strictly between two
        /// frame numbers: the answer the probe must find.
        func leftOut(_ pattern: String, between a: Int, and b: Int) -> Int {
            let spec = pattern.split(separator: ":")[1].split(separator: "/").map { Int($0)! }
            let (burst, period) = spec.count == 2 ? (spec[0], spec[1]) : (1, spec[0])
            return b > a + 1 ? (a + 1..<b).filter { $0 % period >= period - burst }.count : 0
        }

        @Test func injectedDelayIsMeasuredAndInjectedDropsAndBurstsAreCountedOverTCPUDPAndAFile() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            // Two sources side by side, probed at the same moments, so both see the same machine load; both send
            // through the delay stage, so their paths differ only in how long it holds frames: 10 ms with bursts
            // of 5 drops, and 50 ms (40 more) with every 10th frame dropped.
            let cases = [(delay: 10, pattern: "burst:5/90"), (delay: 50, pattern: "every:10")]
            var sources: [(LiveProcess, String, String)] = []
            for c in cases {
                let file = dir.file("source-\(c.delay).ts")
                let (p, url) = try startLive([scene, "--inject-drops", c.pattern, "--inject-delay-ms", String(c.delay),
                                              "--record", file])
                sources.append((p, try #require(url, "\(p.allOutput)"), file))
            }
            var floors: [String: [(min: Double, p50: Double)]] = [:]
            for transport in ["tcp", "udp"] {
                // 5 s from the start: over 3 s of frames after connecting and the wait for a key frame (up to half a
                // second), so the span holds a burst of the 90-frame pattern.
                let probes = try sources.map { _, url, _ in
                    try LiveProcess(binary, ["probe", url, "--transport", transport, "--duration", "5", "--json", "--quiet"])
                }
                var seen: [(min: Double, p50: Double)] = []
                for (i, c) in cases.enumerated() {
                    #expect(probes[i].waitForExit(timeout: 60) == 0, "\(transport): \(probes[i].allOutput)")
                    let json = (try? JSONSerialization.jsonObject(with: Data(probes[i].stdout.joined(separator: "\n").utf8)))
                        as? [String: Any]
                    let total = try #require(json?["total"] as? [String: Any], "\(probes[i].allOutput)")
                    let first = try #require(total["firstFrame"] as? Int, "\(total)")
                    let last = try #require(total["lastFrame"] as? Int)
                    #expect(last - first > 90, "\(transport): frames \(first)…\(last)")
                    #expect(leftOut(c.pattern, between: first, and: last) > 0)
                    #expect(total["dropped"] as? Int == leftOut(c.pattern, between: first, and: last),
                            "\(transport) \(c.pattern): \(total)")
                    #expect(total["unreadable"] as? Int == 0 && total["repeated"] as? Int == 0, "\(total)")
                    let latency = try #require(total["latencyMs"] as? [String: Any], "\(total)")
                    seen.append((try #require(latency["min"] as? Double, "\(latency)"), try #require(latency["p50"] as? Double)))
                }
                floors[transport] = seen
            }
            // A threshold crossed is exit status 3, with the reason. The duration counts from the probe's start, so
            // it leaves room for connecting and a key frame on a loaded machine before the 1 s warm-up ends.
            let strict = try tool([binary, "probe", sources[1].1, "--duration", "4", "--quiet", "--max-latency-ms", "30"])
            #expect(strict.status == 3, "\(strict.out)\n\(strict.err)")
            #expect(strict.out.contains("FAILED: latency p99"), "\(strict.out)")
            for ((p, _, file), c) in zip(sources, cases) {
                p.signal(SIGINT)
                #expect(p.waitForExit() == 0)
                // The source lost nothing on its own: every gap the probe saw was put there on purpose.
                #expect(p.stdout.contains { $0.contains("dropped 0 (") && $0.contains("left out on purpose") },
                        "\(p.allOutput)")
                // The recording has the same gaps, counted exactly, and no latency (it is not live).
                let f = try probe([file])
                #expect(f.status == 0, "\(f.err)")
                let first = try #require(f.total["firstFrame"] as? Int, "\(f.out)")
                let last = try #require(f.total["lastFrame"] as? Int)
                #expect(f.total["dropped"] as? Int == leftOut(c.pattern, between: first, and: last), "\(f.out)")
                #expect(leftOut(c.pattern, between: first, and: last) > 0)
                #expect(f.total["latencyMs"] == nil)
                #expect(f.total["unreadable"] as? Int == 0)
                // Its seconds are the file's own, frames first…last at 30 fps (not how long reading it took: a
                // file decodes faster than it plays).
                let seconds = try #require(f.total["seconds"] as? Double, "\(f.out)")
                #expect(abs(seconds - Double(last - first + 1) / 30) < 0.005, "\(seconds) s for frames \(first)…\(last)")
            }
            // The extra delay shows in the probes' floors within ±2 ms. The answer is what the sources really held
            // at their floor (the asked delay plus the least time the machine took to wake the thread that lets
            // frames go), which each reports at the end. Floors, not medians: a busy machine raises some frames'
            // latency, never every frame's, while how much it raises the median depends on where each source's
            // frames fall against the other processes' work (on a loaded CI machine the medians' difference read
            // 32.9 ms for 40 held, the floors are what the paths themselves cost).
            let held = try sources.map { source -> Double in
                let line = try #require(source.0.stdout.first { $0.hasPrefix("delay held") }, "\(source.0.allOutput)")
                let words = line.split(separator: " ")
                let at = try #require(words.firstIndex(of: "min"), "\(line)")
                return try #require(Double(words[at + 1]), "\(line)")
            }
            #expect(held[1] - held[0] >= 39 && held[1] - held[0] <= 41, "held \(held)")
            for (transport, seen) in floors {
                #expect(abs((seen[1].min - seen[0].min) - (held[1] - held[0])) <= 2,
                        "\(transport): floor \(seen[0].min) ms → \(seen[1].min) ms (p50 \(seen[0].p50) → \(seen[1].p50)), held at least \(held) ms")
            }
        }

        @Test func aStreamWithoutAStripIsReportedAsSuchAndBadURLsAreRefused() throws {
            let (p, url) = try startLive([])   // the demo scene has no timecode strip
            let u = try #require(url)
            let r = try tool([binary, "probe", u, "--duration", "2", "--quiet"])
            #expect(r.status == 0, "\(r.err)")
            #expect(r.out.contains("no timecode strip in"), "\(r.out)")
            #expect(r.out.contains("fps"), "\(r.out)")
            // Asking for a drop threshold on a stream that cannot show drops fails, and says why.
            let strict = try tool([binary, "probe", u, "--duration", "2", "--quiet", "--max-drops", "0"])
            #expect(strict.status == 3 && strict.out.contains("drops unknown"), "\(strict.out)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)

            // Pure noise where a strip would be: every frame unreadable, nothing misread as a frame number.
            let dir = try TempDir()
            let noise = dir.file("noise.ts")
            let make = try tool(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=30",
                                 "-vf", "noise=alls=100:allf=t+u", "-t", "3", "-c:v", "libx264", "-preset", "ultrafast",
                                 "-y", noise])
            #expect(make.status == 0, "\(make.err)")
            let n = try probe([noise])
            #expect(n.status == 0, "\(n.err)")
            #expect(n.total["frames"] as? Int == 90 && n.total["unreadable"] as? Int == 90, "\(n.out)")
            #expect(n.total["readable"] as? Int == 0 && n.total["dropped"] as? Int == 0)

            let port = freePort()
            let unreachable = try tool([binary, "probe", "rtsp://127.0.0.1:\(port)/nothing", "--timeout", "5"])
            #expect(unreachable.status == 1, "\(unreachable.out)")
            #expect(unreachable.err.contains("rtsp://127.0.0.1:\(port)/nothing"), "\(unreachable.err)")
            let missing = try tool([binary, "probe", "/no/such/file.ts"])
            #expect(missing.status != 0 && missing.err.contains("neither a URL"), "\(missing.err)")
            let noHost = try tool([binary, "probe", "rtsp:///pip"])
            #expect(noHost.status != 0 && noHost.err.contains("has no host"), "\(noHost.err)")
            let transport = try tool([binary, "probe", "rtsp://127.0.0.1:1/x", "--transport", "sctp"])
            #expect(transport.status != 0 && transport.err.contains("tcp or udp"), "\(transport.err)")
        }

        /// A probe that measured nothing does not pass: stopped (SIGTERM) before the first frame, or its --duration
        /// spent on a server that accepts and never answers, it fails (exit 3) and says that no frame came.
        @Test func aProbeThatSawNoFrameFailsAndSaysSo() throws {
            // Accepts every connection, holds it, and answers nothing; says "accepted" for each.
            let silent = try LiveProcess("/usr/bin/python3", ["-c", """
                import socket
                s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
                print("listening", s.getsockname()[1], flush=True)
                held = []
                while True:
                    c, _ = s.accept(); held.append(c); print("accepted", flush=True)
                """])
            defer { silent.signal(SIGKILL) }
            let line = try #require(silent.waitForLine { $0.hasPrefix("listening ") }, "\(silent.allOutput)")
            let url = "rtsp://127.0.0.1:\(line.dropFirst("listening ".count))/pip"

            let stopped = try LiveProcess(binary, ["probe", url, "--json", "--quiet", "--timeout", "60"])
            #expect(silent.waitForLine { $0 == "accepted" } != nil, "\(stopped.allOutput)")
            stopped.signal(SIGTERM)
            #expect(stopped.waitForExit(timeout: 30) == 3, "\(stopped.allOutput)")
            let report = (try? JSONSerialization.jsonObject(with: Data(stopped.stdout.joined(separator: "\n").utf8))) as? [String: Any]
            let failures = report?["failures"] as? [String] ?? []
            #expect(failures.contains { $0.hasPrefix("no frame came: it was stopped after") }, "\(stopped.allOutput)")

            let spent = try tool([binary, "probe", url, "--duration", "2", "--timeout", "60"])
            #expect(spent.status == 3, "\(spent.out)\n\(spent.err)")
            #expect(spent.out.contains("no frame came: the --duration of 2 s ran out before the first frame"), "\(spent.out)")
        }

        @Test func probeReadsAnSRTPushAsItsListener() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let port = freePort(udp: true)
            // The probe listens; pipcompose pushes to it (and retries until the listener is up).
            let listener = try LiveProcess(binary, ["probe", "srt://127.0.0.1:\(port)?mode=listener", "--duration", "8",
                                                    "--json", "--quiet", "--timeout", "30"])
            let (p, _) = try startLive([scene, "--push", "srt://127.0.0.1:\(port)"], rtsp: false)
            #expect(listener.waitForExit(timeout: 60) == 0, "\(listener.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
            let json = (try? JSONSerialization.jsonObject(with: Data(listener.stdout.joined(separator: "\n").utf8))) as? [String: Any]
            let total = try #require(json?["total"] as? [String: Any], "\(listener.allOutput)")
            #expect((total["readable"] as? Int ?? 0) >= 90, "\(total)")
            #expect(total["latencyMs"] != nil)
            #expect(json?["live"] as? Bool == true)
        }
    }
}
