import Foundation
import Testing
import TestSupport

/// RGB of the pixel at (x, y) of frame `index`-th second `at` of a recording, decoded by ffmpeg.
func pixel(_ file: String, at seconds: Double, x: Int, y: Int, dir: TempDir) throws -> (r: Int, g: Int, b: Int, size: PixelSizeText) {
    let png = dir.file("at-\(seconds)-\(UUID().uuidString).png")
    let r = try tool(["ffmpeg", "-v", "error", "-y", "-ss", String(seconds), "-i", file, "-frames:v", "1", png])
    #expect(r.status == 0, "\(r.err)")
    let size = try tool(["ffprobe", "-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0:s=x", png])
        .out.trimmingCharacters(in: .whitespacesAndNewlines)
    let rgb = try rgbPixels(png)
    let width = Int(size.split(separator: "x").first ?? "0") ?? 0
    let i = (y * width + x) * 3
    guard i + 2 < rgb.count else { return (-1, -1, -1, size) }
    return (Int(rgb[i]), Int(rgb[i + 1]), Int(rgb[i + 2]), size)
}
typealias PixelSizeText = String

extension EndToEnd {
    @Suite(.serialized) struct VideoLayerTests {
        /// A file layer under a text widget: the recording shows the file's pixels in the layer's rectangle and the
        /// text above it; after a resize the layer is re-laid and still shows them.
        @Test func aFileLayerShowsItsPixelsUnderTheWidgetsAndFollowsAResize() throws {
            let dir = try TempDir()
            let clip = dir.file("magenta.mp4")
            let made = try tool(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=0xff00ff:s=320x180:r=30",
                                 "-f", "lavfi", "-i", "sine=f=300", "-t", "2", "-c:v", "libx264", "-pix_fmt", "yuv420p",
                                 "-c:a", "aac", clip])
            #expect(made.status == 0, "\(made.err)")
            let scene = try dir.write("layer.yaml", """
            size: 640x360
            fps: 30
            background: "#203040"
            widgets:
              - {id: title, type: text, text: "OVER THE LAYER", style: {color: "#ffffff"}, place: {edge: top, size: 0.2}}
              - {id: cam, type: video, source: magenta.mp4, loop: true, place: fill}
            """)
            let out = dir.file("layer.ts")
            let (p, _) = try startLive([scene, "--record", out], rtsp: false)
            let c = try #require(controlURL(p))
            let events = try LiveProcess(binary, ["ctl", "--control", c, "events"])
            #expect(events.waitForLine { $0.contains("listening for events") } != nil)
            #expect(p.waitForFrames("record:\(out)", atLeast: 90), "\(p.allOutput)")
            p.send("resize 480x270")
            #expect(p.waitForLine { $0.contains("resized to 480x270") } != nil, "\(p.allOutput)")
            // Past the clip's end (2 s): it loops.
            #expect(p.waitForFrames("record:\(out)", atLeast: 180), "\(p.allOutput)")
            let (_, body) = http("GET", c + "/v1/status")
            let inputs = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["inputs"] as? [[String: Any]]
            let cam = try #require(inputs?.first, "\(String(decoding: body, as: UTF8.self))")
            #expect(cam["state"] as? String == "playing" && (cam["shown"] as? Int ?? 0) > 60 && cam["restarts"] as? Int == 0,
                    "\(cam)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            #expect(!events.allOutput.contains("inputLost"), "\(events.allOutput)")

            // Before the resize: the layer's middle is the clip's magenta; the band above holds white text.
            let before = try pixel(out, at: 1.5, x: 320, y: 220, dir: dir)
            #expect(before.size == "640x360" && before.r > 200 && before.g < 60 && before.b > 200, "\(before)")
            let png = dir.file("top.png")
            _ = try tool(["ffmpeg", "-v", "error", "-y", "-ss", "1.5", "-i", out, "-frames:v", "1", "-vf", "crop=640:60:0:0", png])
            let band = try rgbPixels(png)
            let white = stride(from: 0, to: band.count - 2, by: 3).filter { band[$0] > 200 && band[$0 + 1] > 200 && band[$0 + 2] > 200 }.count
            #expect(white > 300, "white text pixels in the top band: \(white)")
            // After the resize, at 480x270, past the clip's first end: still magenta in the layer's middle.
            let after = try pixel(out, at: 5.5, x: 240, y: 165, dir: dir)
            #expect(after.size == "480x270" && after.r > 200 && after.g < 60 && after.b > 200, "\(after)")
        }

        /// A 4:3 file filling the whole 16:9 picture behind the widgets (cropped, no bars), a small clip at its own
        /// size in an inset over it, and a text band over the background: each where the scene says, in z order.
        @Test func aBackgroundLayerFillsThePictureAndAnInsetFloatsOverIt() throws {
            let dir = try TempDir()
            let halves = dir.file("halves.mp4"), small = dir.file("small.mp4")
            for (out, graph) in [(halves, "color=c=red:s=160x240:r=30[a];color=c=blue:s=160x240:r=30[b];[a][b]hstack"),
                                 (small, "color=c=0x00ff00:s=64x64:r=30")] {
                let made = try tool(["ffmpeg", "-v", "error", "-y", "-filter_complex", graph, "-t", "2", "-c:v", "libx264",
                                     "-pix_fmt", "yuv420p", out])
                #expect(made.status == 0, "\(made.err)")
            }
            let scene = try dir.write("layers.yaml", """
            size: 640x360
            fps: 30
            widgets:
              - {id: bg, type: video, source: halves.mp4, fit: fill, place: background}
              - {id: caption, type: text, text: "CAPTION", style: {color: "#ffffff"}, place: {edge: bottom, size: 0.2}}
              - {id: pip, type: video, source: small.mp4, fit: center, place: {inset: top-right, width: 0.3, margin: 0.02}}
            """)
            let out = dir.file("layers.ts")
            let (p, _) = try startLive([scene, "--record", out], rtsp: false)
            #expect(p.waitForFrames("record:\(out)", atLeast: 60), "\(p.allOutput)")
            // The live picture (/v1/frame.png) too: the background layer is a plate, copied to the encoder as I420,
            // so this picture is put together from it and the canvas under the widgets.
            let c = try #require(controlURL(p))
            let (status, picture) = http("GET", c + "/v1/frame.png")
            #expect(status == 200)
            let live = dir.file("live.png")
            try picture.write(to: URL(fileURLWithPath: live))
            let rgbLive = try rgbPixels(live)
            func at(_ x: Int, _ y: Int) -> (Int, Int, Int) { let i = (y * 640 + x) * 3; return (Int(rgbLive[i]), Int(rgbLive[i + 1]), Int(rgbLive[i + 2])) }
            let (l, r, inset) = (at(6, 180), at(634, 180), at(530, 68))
            #expect(l.0 > 200 && l.2 < 60 && r.2 > 200 && r.0 < 60 && inset.1 > 200 && inset.0 < 60, "\(l) \(r) \(inset)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            func rgb(_ x: Int, _ y: Int) throws -> (r: Int, g: Int, b: Int) {
                let v = try pixel(out, at: 1.5, x: x, y: y, dir: dir)
                return (v.r, v.g, v.b)
            }
            // Filled: red to the left edge, blue to the right edge, and no bar at the top (a fit would pillarbox).
            for (x, y, red) in [(6, 180, true), (6, 6, true), (300, 120, true), (634, 180, false), (634, 340, false)] {
                let c = try rgb(x, y)
                #expect(red ? (c.r > 200 && c.b < 60) : (c.b > 200 && c.r < 60), "(\(x), \(y)): \(c)")
            }
            // The inset: 192x108 at (434, 14); the 64x64 clip in its middle at its own size, the background around it.
            let mid = try rgb(530, 68), edge = try rgb(440, 20)
            #expect(mid.g > 200 && mid.r < 60 && mid.b < 60, "inset middle: \(mid)")
            #expect(edge.b > 200 && edge.g < 60, "inset edge, outside the clip: \(edge)")
            // The caption band: white text over the background video.
            let png = dir.file("band.png")
            _ = try tool(["ffmpeg", "-v", "error", "-y", "-ss", "1.5", "-i", out, "-frames:v", "1", "-vf", "crop=640:60:0:295", png])
            let band = try rgbPixels(png)
            let white = stride(from: 0, to: band.count - 2, by: 3).filter { band[$0] > 200 && band[$0 + 1] > 200 && band[$0 + 2] > 200 }.count
            let red = stride(from: 0, to: band.count - 2, by: 3).filter { band[$0] > 200 && band[$0 + 1] < 60 && band[$0 + 2] < 60 }.count
            #expect(white > 300 && red > 5000, "white text pixels \(white), red video pixels \(red) in the caption band")
        }

        /// Through the control API a layer takes a new source while running: a test pattern, then a stream that
        /// needs a login it was not given (lost, the reason says what to do, the fallback image shows), then a file
        /// whose picture changes size (inputSizeChanged). Bad values are refused and change nothing.
        @Test func aLayersSourceChangesAtRunTimeAndAFallbackShowsWhileItIsLost() throws {
            let dir = try TempDir()
            let fallback = dir.file("fallback.png"), sizes = dir.file("sizes.ts")
            var made = try tool(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=yellow:s=64x36", "-frames:v", "1", fallback])
            #expect(made.status == 0, "\(made.err)")
            made = try tool(["ffmpeg", "-v", "error", "-y", "-filter_complex",
                             "color=c=white:s=320x240:r=30:d=1[a];color=c=white:s=640x480:r=30:d=1[b];[a]scale=320:240[a2];[b]scale=640:480[b2]",
                             "-map", "[a2]", "-c:v", "libx264", "-pix_fmt", "yuv420p", dir.file("a.ts"),
                             "-map", "[b2]", "-c:v", "libx264", "-pix_fmt", "yuv420p", dir.file("b.ts")])
            #expect(made.status == 0, "\(made.err)")
            made = try tool(["ffmpeg", "-v", "error", "-y", "-i", "concat:\(dir.file("a.ts"))|\(dir.file("b.ts"))", "-c", "copy", sizes])
            #expect(made.status == 0, "\(made.err)")
            let port = freePort()
            let locked = try LiveProcess(binary, ["run", "--size", "320x180", "--no-control", "--rtsp", "127.0.0.1:\(port)/pip",
                                                  "--rtsp-user", "alice", "--rtsp-password", "s3cret"])
            defer { locked.signal(SIGKILL); _ = locked.waitForExit() }
            #expect(locked.waitForLine { $0.hasPrefix("serving ") } != nil, "\(locked.allOutput)")
            let scene = try dir.write("switch.yaml", """
            size: 640x360
            fps: 30
            widgets:
              - {id: cam, type: video, source: "test:red", fallback: fallback.png, place: fill}
            """)
            let out = dir.file("switch.ts")
            let (p, _) = try startLive([scene, "--record", out], rtsp: false)
            let c = try #require(controlURL(p))
            let events = try LiveProcess(binary, ["ctl", "--control", c, "events"])
            #expect(events.waitForLine { $0.contains("listening for events") } != nil)
            #expect(p.waitForLine(timeout: 30) { $0.contains("video 'cam': playing test:red") } != nil, "\(p.allOutput)")
            func set(_ property: String, _ value: String) throws -> (status: Int32, out: String, err: String) {
                try tool([binary, "ctl", "--control", c, "set", property, value])
            }
            let refused = try set("cam.source", "ftp://example.com/x.mp4")
            #expect(refused.status != 0 && refused.err.contains("unknown scheme 'ftp://'"), "\(refused.err)")
            let opaque = try set("cam.opacity", "2")
            #expect(opaque.status != 0 && opaque.err.contains("'opacity' must be in 0...1"), "\(opaque.err)")
            #expect(p.waitForFrames("record:\(out)", atLeast: 45), "\(p.allOutput)")
            #expect(try set("cam.source", "test:blue").status == 0)
            #expect(events.waitForLine(timeout: 30) { $0.contains("inputStarted") && $0.contains("test:blue") } != nil, "\(events.allOutput)")
            #expect(p.waitForFrames("record:\(out)", atLeast: 90), "\(p.allOutput)")
            #expect(try set("cam.source", "rtsp://127.0.0.1:\(port)/pip").status == 0)
            let lost = events.waitForLine(timeout: 30) { $0.contains("inputLost") && $0.contains("\(port)") }
            #expect(lost?.contains("USER:PASSWORD") == true, "\(events.allOutput)")
            #expect(p.waitForFrames("record:\(out)", atLeast: 150), "\(p.allOutput)")
            #expect(try set("cam.source", sizes).status == 0)
            let changed = events.waitForLine(timeout: 30) { $0.contains("inputSizeChanged") }
            #expect(changed?.contains("320x240") == true && changed?.contains("640x480") == true, "\(events.allOutput)")
            let (_, body) = http("GET", c + "/v1/status")
            let inputs = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["inputs"] as? [[String: Any]]
            let cam = try #require(inputs?.first, "\(String(decoding: body, as: UTF8.self))")
            #expect(cam["source"] as? String == URL(fileURLWithPath: sizes).absoluteString && cam["inputSize"] as? String == "640x480",
                    "\(cam)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")

            // The picture's middle, frame by frame: red, then blue, then the yellow fallback, then the file's white (the
            // fallback may also show before the first frame of red).
            let middles = dir.file("middles.rgb")
            let r = try tool(["ffmpeg", "-v", "error", "-y", "-i", out, "-vf", "crop=2:2:319:179,scale=1:1", "-f", "rawvideo",
                              "-pix_fmt", "rgb24", middles])
            #expect(r.status == 0, "\(r.err)")
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: middles)))
            var seen: [String] = []
            for i in stride(from: 0, to: bytes.count - 2, by: 3) {
                let (R, G, B) = (Int(bytes[i]), Int(bytes[i + 1]), Int(bytes[i + 2]))
                let name = R > 200 && G > 200 && B > 200 ? "white" : R > 200 && G > 200 && B < 80 ? "yellow"
                    : R > 200 && G < 80 && B < 80 ? "red" : B > 200 && R < 80 && G < 80 ? "blue" : "other"
                if name != "other" && seen.last != name { seen.append(name) }
            }
            #expect(seen.drop { $0 == "yellow" } == ["red", "blue", "yellow", "white"], "\(seen)")
        }

        /// `snapshot` shows each layer's picture: a test pattern's first frame, a file at the asked scene time; an
        /// unreachable source is a warning and its placeholder, never a failure.
        @Test func aSnapshotShowsTheLayersPictures() throws {
            let dir = try TempDir()
            let clip = dir.file("steps.mp4")
            // Red for the first second, blue for the second.
            let made = try tool(["ffmpeg", "-v", "error", "-y", "-filter_complex",
                                 "color=c=red:s=320x180:r=30:d=1[a];color=c=blue:s=320x180:r=30:d=1[b];[a][b]concat=n=2",
                                 "-c:v", "libx264", "-pix_fmt", "yuv420p", clip])
            #expect(made.status == 0, "\(made.err)")
            let scene = try dir.write("still.yaml", """
            size: 640x360
            widgets:
              - {id: bg, type: video, source: "test:green", place: background}
              - {id: clip, type: video, source: steps.mp4, place: {inset: top-left, width: 0.4}}
              - {id: gone, type: video, source: "rtsp://127.0.0.1:\(freePort())/none", place: {inset: bottom-right, width: 0.3}}
            """)
            for (at, red) in [(0.5, true), (1.5, false)] {
                let png = dir.file("still-\(at).png")
                let r = try tool([binary, "snapshot", scene, "--at", String(at), "-o", png])
                #expect(r.status == 0 && r.err.contains("video 'gone': no picture"), "\(r.err)")
                let rgb = try rgbPixels(png)
                func colour(_ x: Int, _ y: Int) -> (Int, Int, Int) {
                    let i = (y * 640 + x) * 3
                    return (Int(rgb[i]), Int(rgb[i + 1]), Int(rgb[i + 2]))
                }
                let bg = colour(320, 180), inset = colour(60, 40)
                #expect(bg.1 > 100 && bg.0 < 60 && bg.2 < 60, "background at (320, 180): \(bg)")
                #expect(red ? (inset.0 > 200 && inset.2 < 60) : (inset.2 > 200 && inset.0 < 60), "clip at \(at) s: \(inset)")
            }
        }

        /// Pass-through latency: a second pipcompose shows the first's stream as its whole picture; the probe reads
        /// the first's strip through both (decoded, painted, encoded again) and finds the second path later, by what
        /// one pipcompose in between adds.
        @Test func aSecondPipcomposeCarriesTheFirstsStripAndItsLatencyIsMeasured() throws {
            let dir = try TempDir()
            let (a, urlA) = try startLive([try timecodeScene(dir)])
            let direct = try #require(urlA, "\(a.allOutput)")
            let relay = try dir.write("relay.yaml", """
            size: 640x360
            fps: 30
            widgets:
              - {id: a, type: video, source: "\(direct)", fit: fill, place: background}
            """)
            let (b, urlB) = try startLive([relay])
            let through = try #require(urlB, "\(b.allOutput)")
            #expect(b.waitForLine(timeout: 30) { $0.contains("video 'a': playing") } != nil, "\(b.allOutput)")
            let probes = try [direct, through].map {
                try LiveProcess(binary, ["probe", $0, "--transport", "tcp", "--duration", "6", "--json", "--quiet"])
            }
            var p50: [Double] = []
            for (name, probe) in zip(["direct", "through"], probes) {
                #expect(probe.waitForExit(timeout: 60) == 0, "\(name): \(probe.allOutput)")
                let json = (try? JSONSerialization.jsonObject(with: Data(probe.stdout.joined(separator: "\n").utf8))) as? [String: Any]
                let total = try #require(json?["total"] as? [String: Any], "\(name): \(probe.allOutput)")
                let first = try #require(total["firstFrame"] as? Int, "\(name): \(total)"), last = try #require(total["lastFrame"] as? Int)
                // The first's frame numbers, read from the second's pictures too (a repeat or a skip where the two
                // frame clocks slip past each other is expected through a layer; unreadable strips are not). The
                // direct probe joins a media the second already plays, between key frames: its decoder shows
                // pictures it cannot complete until the next one (under a second), so its first second is left out.
                #expect(last - first > 90, "\(name): \(total)")
                let seconds = try #require(json?["seconds"] as? [[String: Any]], "\(name)")
                let later = seconds.filter { ($0["second"] as? Int ?? 0) >= 1 }
                #expect(later.count >= 4 && later.allSatisfy { $0["unreadable"] as? Int == 0 }, "\(name): \(seconds)")
                let latency = try #require(total["latencyMs"] as? [String: Any], "\(name): \(total)")
                p50.append(try #require(latency["p50"] as? Double))
            }
            #expect(p50[1] > p50[0], "through a second pipcompose \(p50[1]) ms, direct \(p50[0]) ms")
            for p in [b, a] {
                p.signal(SIGINT)
                #expect(p.waitForExit() == 0, "\(p.allOutput)")
            }
        }

        /// An RTSP layer taken from a second pipcompose: killed, the layer says so and the stream goes on; started
        /// again on the same port, the picture comes back; the recording lost no frame.
        @Test func anRTSPLayerIsLostAndComesBackWhileTheOutputsGoOn() throws {
            let dir = try TempDir()
            let port = freePort()
            let sourceArgs = ["run", "--size", "320x180", "--no-control", "--rtsp", "127.0.0.1:\(port)/pip"]
            var source = try LiveProcess(binary, sourceArgs)
            #expect(source.waitForLine { $0.hasPrefix("serving ") } != nil, "\(source.allOutput)")
            let scene = try dir.write("relay.yaml", """
            size: 640x360
            widgets:
              - {id: remote, type: video, source: "rtsp://127.0.0.1:\(port)/pip", place: fill}
            """)
            let out = dir.file("relayed.ts")
            let (p, _) = try startLive([scene, "--record", out], rtsp: false)
            let c = try #require(controlURL(p))
            let events = try LiveProcess(binary, ["ctl", "--control", c, "events"])
            #expect(events.waitForLine(timeout: 30) { $0.contains("inputStarted") && $0.contains("remote") } != nil,
                    "\(events.allOutput)\n\(p.allOutput)")
            source.signal(SIGKILL)
            _ = source.waitForExit()
            #expect(events.waitForLine(timeout: 30) { $0.contains("inputLost") && $0.contains("remote") } != nil,
                    "\(events.allOutput)")
            source = try LiveProcess(binary, sourceArgs)
            #expect(source.waitForLine { $0.hasPrefix("serving ") } != nil, "\(source.allOutput)")
            #expect(events.waitForLine(timeout: 40) { $0.contains("inputBack") && $0.contains("remote") } != nil,
                    "\(events.allOutput)\n\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            source.signal(SIGINT)
            _ = source.waitForExit()
            // The recording went on through the loss and holds every frame it was given.
            let sent = try #require(summaryFrames(p, "record:\(out)"), "\(p.allOutput)")
            #expect(try sent > 30 && decodedFrames(out) == sent, "\(p.allOutput)")
        }

        /// A source that stops sending without closing (its process stopped) is lost after the stall timeout and
        /// taken back when it sends again; the outputs never wait for it.
        @Test func aStalledSourceIsLostAndTakenBack() throws {
            let dir = try TempDir()
            let port = freePort()
            let source = try LiveProcess(binary, ["run", "--size", "320x180", "--no-control", "--rtsp", "127.0.0.1:\(port)/pip"])
            defer { source.signal(SIGKILL); _ = source.waitForExit() }
            #expect(source.waitForLine { $0.hasPrefix("serving ") } != nil, "\(source.allOutput)")
            let scene = try dir.write("stall.yaml", """
            size: 640x360
            widgets:
              - {id: remote, type: video, source: "rtsp://127.0.0.1:\(port)/pip", place: fill}
            """)
            let out = dir.file("stall.ts")
            let (p, _) = try startLive([scene, "--record", out], rtsp: false)
            #expect(p.waitForLine(timeout: 30) { $0.contains("video 'remote': playing") } != nil, "\(p.allOutput)")
            source.signal(SIGSTOP)
            let lost = p.waitForLine(timeout: 30) { $0.contains("video 'remote': lost") }
            #expect(lost?.contains("stalled") == true, "\(p.allOutput)")
            source.signal(SIGCONT)
            #expect(p.waitForLine(timeout: 40) { $0.contains("video 'remote': back") } != nil, "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            let sent = try #require(summaryFrames(p, "record:\(out)"), "\(p.allOutput)")
            #expect(try sent > 150 && decodedFrames(out) == sent, "\(p.allOutput)")
        }

        /// Bad sources are refused with the scene's line and column; an unreachable one fails alone at run time.
        @Test func badSourcesAreRefusedWhereTheSceneSaysThemAndAnUnreachableOneFailsAlone() throws {
            let dir = try TempDir()
            let cases: [(String, String)] = [
                ("ftp://example.com/a.mp4", "unknown scheme 'ftp://'"),
                ("missing.mp4", "no such file"),
                ("test:plaid", "unknown test pattern 'plaid'"),
            ]
            for (source, message) in cases {
                let scene = try dir.write("bad.yaml", "size: 320x180\nwidgets:\n  - {type: video, source: \"\(source)\"}\n")
                let r = try tool([binary, "run", scene, "--duration", "1", "--no-control"])
                #expect(r.status != 0 && r.err.contains("bad.yaml:3:") && r.err.contains(message), "\(source): \(r.err)")
            }
            // Files that hold no pictures: refused at their line before anything starts.
            _ = try dir.write("notes.mp4", "not a video at all\n")
            let tone = dir.file("tone.m4a")
            #expect(try tool(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=440", "-t", "1", tone]).status == 0)
            for (file, message) in [("notes.mp4", "is not a video GStreamer can read"), ("tone.m4a", "holds no video")] {
                let scene = try dir.write("file.yaml", "size: 320x180\nwidgets:\n  - {type: video, source: \(file)}\n")
                let r = try tool([binary, "run", scene, "--duration", "1", "--no-control"])
                #expect(r.status != 0 && r.err.contains("file.yaml:3:") && r.err.contains(message), "\(file): \(r.err)")
            }
            let stretch = try dir.write("stretch.yaml", "size: 320x180\nwidgets:\n  - {type: video, source: test, fit: stretch}\n")
            let f = try tool([binary, "run", stretch, "--duration", "1", "--no-control"])
            #expect(f.status != 0 && f.err.contains("stretch.yaml:3:") && f.err.contains("center, fill, fit"), "\(f.err)")

            let nobody = try dir.write("nobody.yaml", "size: 320x180\nwidgets:\n  - {type: video, source: \"rtsp://127.0.0.1:\(freePort())/none\"}\n")
            let out = dir.file("alone.ts")
            let r = try LiveProcess(binary, ["run", nobody, "--size", "320x180", "--duration", "4", "--no-control", "--record", out])
            #expect(r.waitForExit(timeout: 60) == 0, "\(r.allOutput)")
            #expect(r.allOutput.contains("lost"), "\(r.allOutput)")
            let sent = try #require(summaryFrames(r, "record:\(out)"), "\(r.allOutput)")
            #expect(try sent > 90 && decodedFrames(out) == sent, "\(r.allOutput)")
        }
    }
}
