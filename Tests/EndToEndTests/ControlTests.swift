import Compositor
import Foundation
import Testing
import TestSupport

/// Runs `pipcompose ctl` against an instance.
func ctl(_ control: String, _ args: [String]) throws -> Run {
    try pipcompose(["ctl", "--control", control] + args)
}

/// One HTTP request through the library's control client, as the owner (with the token `run` stored for its port)
/// or, `anonymous`, with no token; returns the status code (0: unreachable) and body.
func http(_ method: String, _ url: String, body: Data? = nil, anonymous: Bool = false) -> (Int, Data) {
    guard let u = URLComponents(string: url), let scheme = u.scheme, let host = u.host, let port = u.port else {
        return (0, Data())
    }
    let base = "\(scheme)://\(host):\(port)"
    guard let client = try? (anonymous ? ControlClient(base: base, token: nil) : ControlClient.local(base: base)) else {
        return (0, Data())
    }
    let path = u.percentEncodedPath + (u.percentEncodedQuery.map { "?" + $0 } ?? "")
    guard let answer = try? client.exchange(method, path, body: body) else { return (0, Data()) }
    return (answer.status, answer.body)
}

/// The token the instance at `control` stored for its user (what `ctl` finds by itself).
func ownerToken(_ control: String) throws -> String {
    try #require(try ControlClient.local(base: control).token, "no token stored for \(control)")
}

/// A token of the same shape that is not this one: its first digit changed to another (never to itself, which
/// a fixed "0" would be for one token in sixteen).
func strangerToken(like token: String) -> String {
    (token.first == "0" ? "1" : "0") + token.dropFirst()
}

func statusJSON(_ control: String) -> [String: Any] {
    let (_, data) = http("GET", control + "/v1/status")
    return (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
}

extension EndToEnd {
    @Suite(.serialized) struct ControlTests {
        @Test func resizeThroughTheAPIReachesANewViewer() throws {
            let (p, url) = try startLive([])
            let u = try #require(url), c = try #require(controlURL(p))
            let r = try ctl(c, ["resize", "480x270"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(p.waitForLine { $0.contains("resized to 480x270") } != nil)
            let probe = try tool(["ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-show_entries", "stream=width,height",
                                  "-of", "csv=p=0", u])
            #expect(probe.out.trimmingCharacters(in: .whitespacesAndNewlines) == "480,270")
            let bad = try ctl(c, ["resize", "481x270"])
            #expect(bad.status != 0 && bad.stderr.contains("even"), "\(bad.stderr)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        /// frame.png is the live picture: after a widget update it shows the new text, byte for byte what
        /// `snapshot` draws for a scene that says so (it used to render the scene file afresh and miss updates).
        @Test func framePNGShowsTheLivePictureWithItsUpdates() throws {
            let dir = try TempDir()
            let scene = """
            size: 640x360
            fps: 30
            background: "#1d3557"
            widgets:
              - {id: note, type: text, text: "before", align: center, place: fill}
            """
            let before = try dir.write("before.yaml", scene)
            let after = try dir.write("after.yaml", scene.replacingOccurrences(of: "\"before\"", with: "\"after the update\""))
            let (p, _) = try startLive([before], rtsp: false)
            let c = try #require(controlURL(p))
            let (status, _) = http("PATCH", c + "/v1/widgets/note", body: Data(#"{"text": "after the update"}"#.utf8))
            #expect(status == 200)
            let expected = dir.file("expected.png")
            let snap = try pipcompose(["snapshot", after, "--size", "640x360", "-o", expected])
            #expect(snap.status == 0, "\(snap.stderr)")
            let want = try Data(contentsOf: URL(fileURLWithPath: expected))
            // The update is drawn in the next frame; the picture is asked for until it shows (bounded).
            var got = Data()
            poll(until: {
                let (code, png) = http("GET", c + "/v1/frame.png")
                #expect(code == 200)
                got = png
                return got == want
            }, timeout: 10)
            #expect(got == want, "frame.png never showed the updated text")
            let (code, small) = http("GET", c + "/v1/frame.png?size=320x240")
            #expect(code == 200 && small.count > 0)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        @Test func pauseFreezesTheTickerWhileFramesKeepFlowing() throws {
            let dir = try TempDir()
            let file = dir.file("pause.ts")
            let (p, _) = try startLive(["--record", file], rtsp: false)
            let c = try #require(controlURL(p))
            #expect(p.waitForFrames("record:\(file)", atLeast: 45))
            #expect(try ctl(c, ["pause"]).status == 0)
            let pausedAt = statusJSON(c)["frame"] as? Int ?? 0
            #expect(statusJSON(c)["state"] as? String == "paused")
            #expect(p.waitForFrames("record:\(file)", atLeast: pausedAt + 80))
            #expect(try ctl(c, ["play"]).status == 0)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
            // The ticker band (bottom 10 % of the picture) of decoded frames.
            let r = try tool(["ffmpeg", "-v", "error", "-i", file, "-vf", "crop=640:36:0:324", "-f", "rawvideo",
                              "-pix_fmt", "gray", dir.file("band.gray")])
            #expect(r.status == 0, "\(r.err)")
            let band = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file("band.gray"))))
            let frameBytes = 640 * 36
            /// How far the band moved left from frame a to frame b: the shift that best matches them.
            func shift(_ a: Int, _ b: Int) -> Int {
                let x = Array(band[(a * frameBytes)..<((a + 1) * frameBytes)])
                let y = Array(band[(b * frameBytes)..<((b + 1) * frameBytes)])
                var best = (0, Int.max)
                for s in 0...120 {
                    var d = 0
                    for row in 0..<36 {
                        for col in 0..<(640 - 120) { d += abs(Int(y[row * 640 + col]) - Int(x[row * 640 + col + s])) }
                    }
                    if d < best.1 { best = (s, d) }
                }
                return best.0
            }
            // Playing: 140 px/s at 720 high is 70 px/s here; paused: the band stands still (compression noise aside).
            let moving = shift(5, 35)
            #expect(moving >= 60 && moving <= 80, "the ticker should move about 70 px in a second, moved \(moving)")
            #expect(shift(pausedAt + 15, pausedAt + 45) == 0, "the ticker should stand still while paused")
        }

        @Test func skipIsRefusedOnALiveSceneAndWorksOnAFiniteOne() throws {
            let (p, _) = try startLive([], rtsp: false)
            let c = try #require(controlURL(p))
            let r = try ctl(c, ["skip", "-15"])
            #expect(r.status != 0)
            #expect(r.stderr.contains("live") && r.stderr.contains("409"), "\(r.stderr)")
            let next = try ctl(c, ["skip", "next"])
            #expect(next.status != 0 && next.stderr.contains("no music") && next.stderr.contains("--audio FILE"), "\(next.stderr)")
            let bad = try ctl(c, ["skip", "sideways"])
            #expect(bad.status != 0 && bad.stderr.contains("next, or previous"), "\(bad.stderr)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
            let dir = try TempDir()
            let scene = dir.file("finite.yaml")
            try "timeline: {duration: 100}\nwidgets:\n  - {type: ticker, items: [a, b]}\n".write(toFile: scene, atomically: true, encoding: .utf8)
            let (f, _) = try startLive([scene], rtsp: false)
            let fc = try #require(controlURL(f))
            let ok = try ctl(fc, ["skip", "30"])
            #expect(ok.status == 0, "\(ok.stderr)")
            #expect((statusJSON(fc)["sceneTime"] as? Double ?? 0) >= 30)
            f.signal(SIGINT)
            #expect(f.waitForExit() == 0)
        }

        @Test func aThousandFuzzedBodiesLeaveTheStreamRunning() throws {
            let (p, _) = try startLive(["--size", "320x180"], rtsp: false)
            let c = try #require(controlURL(p))
            var rng = SystemRandomNumberGenerator()
            let endpoints = [("POST", "/v1/resize"), ("POST", "/v1/skip"), ("PATCH", "/v1/widgets/memo"),
                             ("PATCH", "/v1/widgets/nowplaying"), ("PATCH", "/v1/widgets/nosuch"), ("POST", "/v1/outputs"),
                             ("PATCH", "/v1/widgets/clock")]
            let samples = ["{", "[]", "null", "{\"size\": 5}", "{\"size\": \"99999x1\"}", "{\"width\": 1e308, \"height\": -1}",
                           "{\"seconds\": \"x\"}", "{\"text\": 7}", "{\"items\": [1, 2]}", "{\"title\": null}",
                           "{\"duration\": -5}", "{\"record\": \"/nonexistent/x.mp4\"}", "{\"push\": \"ftp://x\"}",
                           "{\"timezone\": \"Mars/Base\"}", "\u{0}\u{1}\u{2}", "{\"a\":" + String(repeating: "[", count: 500)]
            var serverErrors = 0
            for i in 0..<1000 {
                let (method, path) = endpoints[Int.random(in: 0..<endpoints.count, using: &rng)]
                var body: Data
                if i % 3 == 0 {
                    body = Data((0..<Int.random(in: 0..<200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
                } else {
                    body = Data(samples[Int.random(in: 0..<samples.count, using: &rng)].utf8)
                }
                let (status, _) = http(method, c + path, body: body)
                if status >= 500 || status == 0 { serverErrors += 1 }
            }
            // A body over 1 MB is refused.
            let (big, _) = http("PATCH", c + "/v1/widgets/memo", body: Data(repeating: 0x20, count: 1_100_000))
            #expect(big == 413)
            #expect(serverErrors == 0)
            let s = statusJSON(c)
            #expect(s["dropped"] as? Int == 0, "\(s)")
            let before = s["frame"] as? Int ?? 0
            #expect(p.waitForLine { line in
                line.hasPrefix("status:") && (Int(line.split(separator: " ")[3]) ?? 0) > before + 15
            } != nil)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        @Test func eventsOfARecordingStartedAndStoppedAtRunTimeArriveInOrder() throws {
            let dir = try TempDir()
            let file = dir.file("runtime.mp4")
            let (p, _) = try startLive(["--record-dir", dir.path], rtsp: false)
            let c = try #require(controlURL(p))
            let events = try LiveProcess(binary, ["ctl", "--control", c, "events"])
            #expect(events.waitForLine { $0.contains("listening for events") } != nil, "\(events.allOutput)")
            let (cpu0, wall0) = (events.cpuSeconds, Date())
            #expect(try ctl(c, ["record", "start", file]).status == 0)
            #expect(p.waitForFrames("record:\(file)", atLeast: 30))
            #expect(try ctl(c, ["record", "stop", file]).status == 0)
            #expect(events.waitForLine { $0.contains("\"didStop\"") } != nil, "\(events.allOutput)")
            // Waiting for events costs next to nothing (URLSession on Linux kept a core 80 % busy doing it).
            let (cpu, wall) = (events.cpuSeconds - cpu0, Date().timeIntervalSince(wall0))
            #expect(cpu < 0.25 * wall, "ctl events used \(cpu) CPU-s in \(wall) s")
            let order = events.stdout.compactMap { line -> String? in
                ["willStart", "didStart", "willStop", "didStop"].first { line.contains("\"\($0)\"") }
            }
            #expect(order == ["willStart", "didStart", "willStop", "didStop"])
            #expect(try decodedFrames(file) ?? 0 >= 30)
            events.signal(SIGKILL)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }
    }

    @Suite struct MetricsTests {
        @Test func prometheusMetricsCountFramesAndRenderTime() throws {
            let dir = try TempDir()
            let file = dir.file("m.ts")
            let (p, _) = try startLive(["--size", "320x180", "--record", file], rtsp: false)
            let c = try #require(controlURL(p))
            #expect(p.waitForFrames("record:\(file)", atLeast: 30))
            let (status, data) = http("GET", c + "/metrics")
            let text = String(decoding: data, as: UTF8.self)
            #expect(status == 200)
            func value(_ name: String) -> Double? {
                text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
                    .flatMap { Double($0.split(separator: " ").last ?? "") }
            }
            #expect((value("pipcompose_frames_rendered_total") ?? 0) >= 30, "\(text)")
            #expect((value("pipcompose_render_seconds_count") ?? 0) >= 30)
            #expect(value("pipcompose_frames_dropped_total") == nil || value("pipcompose_frames_dropped_total") == 0)
            #expect(text.contains("pipcompose_output_bytes_total{output=\"record:\(file)\"}"))
            // The process's own CPU and memory, as `ps` sees them (what a soak of a run plots).
            let ps = try tool(["ps", "-o", "rss=,cputimes=", "-p", String(p.process.processIdentifier)])
            let fields = ps.out.split(separator: " ").compactMap { Double($0) }
            let rss = try #require(value("pipcompose_process_resident_bytes"), "\(text)")
            let cpu = try #require(value("pipcompose_process_cpu_seconds_total"), "\(text)")
            #expect(fields.count == 2 && abs(rss / 1024 - fields[0]) < fields[0] / 4, "\(rss) B against ps: \(ps.out)")
            #expect(fields.count == 2 && cpu > 0 && cpu <= fields[1] + 1, "\(cpu) s against ps: \(ps.out)")
            // The allocator's view: its blocks given out are part of the resident memory.
            let allocated = try #require(value("pipcompose_process_heap_allocated_bytes"), "\(text)")
            #expect(allocated > 1_048_576 && allocated < rss && value("pipcompose_process_heap_free_bytes") != nil, "\(text)")
            // The pictures in flight are blocks mapped apart, part of the blocks given out.
            let mapped = try #require(value("pipcompose_process_heap_mapped_bytes"), "\(text)")
            #expect(mapped > 0 && mapped <= allocated, "\(text)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }
    }

    @Suite struct TickerFeedTests {
        @Test func linesAppendedToAWatchedFileAndToStdinReachTheTicker() throws {
            let dir = try TempDir()
            let news = try dir.write("news.txt", "first item\n")
            let (p, _) = try startLive(["--ticker-file", "memo=\(news)"], rtsp: false)
            let c = try #require(controlURL(p))
            let events = try LiveProcess(binary, ["ctl", "--control", c, "events"])
            #expect(events.waitForLine { $0.contains("listening for events") } != nil)
            let handle = try #require(FileHandle(forWritingAtPath: news))
            handle.seekToEndOfFile()
            handle.write(Data("breaking: appended line\n".utf8))
            try handle.close()
            #expect(events.waitForLine { $0.contains("widgetUpdated") && $0.contains("news.txt") } != nil, "\(events.allOutput)")
            events.signal(SIGKILL)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)

            let (q, _) = try startLive(["--ticker-stdin", "memo"], rtsp: false)
            let qc = try #require(controlURL(q))
            let qEvents = try LiveProcess(binary, ["ctl", "--control", qc, "events"])
            #expect(qEvents.waitForLine { $0.contains("listening for events") } != nil)
            q.send("from a pipe")
            #expect(qEvents.waitForLine { $0.contains("widgetUpdated") && $0.contains("memo") } != nil)
            qEvents.signal(SIGKILL)
            q.signal(SIGINT)
            #expect(q.waitForExit() == 0)
            // A feed for a widget that is not a ticker is refused.
            let bad = try pipcompose(["run", "--no-control", "--size", "320x180", "--duration", "1", "--ticker-file", "clock=\(news)"])
            #expect(bad.status != 0 && bad.stderr.contains("not a ticker"), "\(bad.stderr)")
        }
    }

    @Suite struct DropEventTests {
        @Test func aSlowOutputDropsFramesAndTheEventStreamSaysSo() throws {
            let dir = try TempDir()
            // An output that takes 200 ms a frame: its bounded queue must overflow and drop.
            let slow = try dir.write("slow.pipeline", "appsrc name=in ! identity sleep-time=200000 ! fakesink sync=false\n")
            let file = dir.file("beside.ts")
            let (p, _) = try startLive(["--pipeline", slow, "--record", file], rtsp: false)
            let c = try #require(controlURL(p))
            let events = try LiveProcess(binary, ["ctl", "--control", c, "events"])
            #expect(events.waitForLine { $0.contains("listening for events") } != nil)
            let drop = try #require(events.waitForLine(timeout: 30) { $0.contains("framesDropped") }, "\(events.allOutput)")
            #expect(drop.contains("\"new\"") && drop.contains("\"total\""), "\(drop)")
            // Rate-limited: a second report comes later, not for every frame.
            #expect(events.waitForLines(count: 2, timeout: 30) { $0.contains("framesDropped") }, "\(events.allOutput)")
            events.signal(SIGKILL)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            // The recording beside the slow output lost nothing.
            let line = try #require(p.stdout.last { $0.hasPrefix("record:\(file):") }, "\(p.allOutput)")
            #expect(line.hasSuffix("dropped 0"), "\(line)")
            let slowLine = try #require(p.stdout.last { $0.hasPrefix("pipeline:slow.pipeline") }, "\(p.allOutput)")
            #expect(!slowLine.hasSuffix("dropped 0"), "\(slowLine)")
            #expect(try decodedFrames(file) == summaryFrames(p, "record:\(file)"))
        }
    }
}
