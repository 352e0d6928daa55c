import Compositor
import Foundation
import Testing
import TestSupport

/// Every frame of a video file decoded by ffmpeg to 8-bit gray: its strip's frame number (nil: unreadable) and the
/// mean brightness of the rows from `from` (a fraction of the height) down.
func grayFrames(_ path: String, size: PixelSize, below from: Double, in dir: TempDir) throws -> [(frame: UInt64?, mean: Double)] {
    let raw = dir.file(URL(fileURLWithPath: path).lastPathComponent + ".gray")
    let r = try tool(["ffmpeg", "-hide_banner", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "gray", "-y", raw],
                     timeout: 90)
    #expect(r.status == 0, "\(r.err)")
    let data = try Data(contentsOf: URL(fileURLWithPath: raw))
    let frameBytes = size.width * size.height
    let top = Int(Double(size.height) * from)
    return stride(from: 0, to: data.count - frameBytes + 1, by: frameBytes).map { start in
        data.withUnsafeBytes { all in
            let frame = UnsafeRawBufferPointer(rebasing: all[start..<(start + frameBytes)])
            let reading = TimecodeCodec.read(luma: frame, width: size.width, height: size.height, stride: size.width)
            var sum = 0
            for i in (top * size.width)..<frameBytes { sum += Int(frame[i]) }
            return (reading?.frame, Double(sum) / Double(frameBytes - top * size.width))
        }
    }
}

extension EndToEnd {
    @Suite(.serialized) struct RenditionTests {
        /// Two renditions beside the main picture, recorded in one run: each file has its rendition's size and the
        /// layout that size gets (the scene drawn at that size, not the main picture scaled down: that one the
        /// same comparison finds wrong), the same frame numbers in every strip, and a widget update made while
        /// they record is in all three from the same frame on.
        @Test func renditionsAreDrawnForTheirOwnSizeOnOneClock() throws {
            let dir = try TempDir()
            let scene = try dir.write("renditions.yaml", """
            title: Renditions
            size: 640x360
            fps: 30
            background: "#1d3557"
            widgets:
              - {id: strip, type: timecode, place: {edge: top, size: 0.12}}
              - {id: label, type: text, text: "one scene, three sizes", place: {edge: bottom, size: 0.2}}
              - {id: note, type: text, text: "before", align: center, place: fill}
            """)
            let updated = try dir.write("updated.yaml", try String(contentsOfFile: scene, encoding: .utf8)
                .replacingOccurrences(of: "text: \"before\"", with: "text: \"AFTER THE UPDATE\""))
            let files = ["main": (dir.file("main.mp4"), PixelSize(width: 640, height: 360)),
                         "small": (dir.file("small.mp4"), PixelSize(width: 320, height: 180)),
                         "mid": (dir.file("mid.ts"), PixelSize(width: 416, height: 234))]
            let (p, _) = try startLive([scene, "--rendition", "320x180", "--rendition", "416x234@300",
                                        "--record", files["main"]!.0, "--record", files["small"]!.0 + "@320x180",
                                        "--record", files["mid"]!.0 + "@416x234"], rtsp: false)
            let c = try #require(controlURL(p), "\(p.allOutput)")
            #expect(p.waitForFrames("record:\(files["small"]!.0)@320x180", atLeast: 30), "\(p.allOutput)")
            let (status, _) = http("PATCH", c + "/v1/widgets/note", body: Data(#"{"text": "AFTER THE UPDATE"}"#.utf8))
            #expect(status == 200)
            #expect(p.waitForFrames("record:\(files["mid"]!.0)@416x234", atLeast: 90), "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")

            var changedAt: [String: UInt64] = [:]
            var numbers: [String: [UInt64]] = [:]
            for (name, (path, size)) in files {
                #expect(try frameSizes(path).allSatisfy { $0 == "\(size)" }, "\(name)")
                let frames = try grayFrames(path, size: size, below: 0.3, in: dir)
                #expect(frames.count >= 90, "\(name): \(frames.count) frames")
                #expect(frames.allSatisfy { $0.frame != nil }, "\(name): unreadable strips")
                numbers[name] = frames.compactMap(\.frame)
                // The note's area changes once, at the update; the first frame that differs from the first one.
                let first = try #require(frames.first)
                changedAt[name] = frames.first { abs($0.mean - first.mean) > 1 }?.frame ?? nil
            }
            #expect(numbers["small"] == numbers["main"] && numbers["mid"] == numbers["main"],
                    "frame numbers differ: \(numbers.mapValues { ($0.first ?? 0, $0.last ?? 0, $0.count) })")
            let update = try #require(changedAt["main"], "the update never showed: \(changedAt)")
            #expect(changedAt["small"] == update && changedAt["mid"] == update, "\(changedAt)")

            // Each picture against the scene drawn at its own size, the update included from that frame on: the
            // updated scene for the frames after it, so frames before it are the ones the probe finds different.
            for (name, (path, _)) in files {
                let r = try probe([path, "--reference", updated])
                let seen = try ProbeResult(json: r.out)
                #expect(r.status == 0 && seen.unreadable == 0, "\(name): \(r.err)")
                #expect(seen.compared >= 90, "\(name): \(seen.fidelity)")
                // Before the update the note said "before": exactly those frames differ from the updated scene.
                #expect(seen.corrupt == Int(update - (numbers[name]?.first ?? 0)), "\(name): \(seen.fidelity)")
            }
            // The main picture scaled down to the small rendition's size is not its layout.
            let scaled = dir.file("scaled.mkv")
            let s = try tool(["ffmpeg", "-hide_banner", "-v", "error", "-i", files["main"]!.0, "-vf", "scale=320:180",
                              "-c:v", "ffv1", "-y", scaled], timeout: 90)
            #expect(s.status == 0, "\(s.err)")
            let r = try probe([scaled, "--reference", updated])
            let seen = try ProbeResult(json: r.out)
            #expect(seen.corrupt > seen.compared / 2, "the scaled main picture passed as the 320x180 layout: \(seen.fidelity)")
        }

        /// Over the control API a recording of a rendition starts and stops like any other; a rendition no output
        /// carries is not drawn (its frame count stands still while the main picture's goes on), and one the run
        /// does not have is refused with the ones it has.
        @Test func theControlAPIRecordsARenditionAndNobodyWatchingCostsNothing() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let (p, _) = try startLive([scene, "--rendition", "320x180", "--record-dir", dir.path], rtsp: false)
            let c = try #require(controlURL(p), "\(p.allOutput)")
            func status() throws -> (frame: Int, rendition: [String: Any]) {
                let (code, body) = http("GET", c + "/v1/status")
                let json = try #require(try? JSONSerialization.jsonObject(with: body) as? [String: Any], "\(code)")
                let r = try #require((json["renditions"] as? [[String: Any]])?.first, "\(json)")
                return (json["frame"] as? Int ?? -1, r)
            }
            #expect(p.waitForFrame(30))
            let idle = try status()
            #expect(idle.frame >= 30 && idle.rendition["frames"] as? Int == 0 && idle.rendition["encoded"] as? Int == 0,
                    "\(idle)")
            let file = dir.file("api.mp4")
            let (refused, why) = http("POST", c + "/v1/outputs", body: Data(#"{"record": "\#(dir.file("no.mp4"))", "rendition": "416x234"}"#.utf8))
            #expect(refused == 422 && String(decoding: why, as: UTF8.self).contains("renditions: 320x180"))
            #expect(!FileManager.default.fileExists(atPath: dir.file("no.mp4")))
            let (code, started) = http("POST", c + "/v1/outputs", body: Data(#"{"record": "\#(file)", "rendition": "320x180"}"#.utf8))
            #expect(code == 200, "\(String(decoding: started, as: UTF8.self))")
            let id = "record:\(file)@320x180"
            #expect((try? JSONSerialization.jsonObject(with: started) as? [String: String])?["started"] == id)
            #expect(p.waitForFrames(id, atLeast: 45), "\(p.allOutput)")
            let watched = try status()
            #expect(watched.rendition["outputs"] as? [String] == [id] && (watched.rendition["frames"] as? Int ?? 0) > 0,
                    "\(watched)")
            let (stopped, _) = http("DELETE", c + "/v1/outputs?id=" + (id.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? id))
            #expect(stopped == 202)
            // Once nothing carries it, its count stands still while the main picture goes on.
            let left = try status()
            #expect(p.waitForFrame(left.frame + 30))
            let later = try status()
            #expect(later.frame >= left.frame + 30, "\(later)")
            #expect((later.rendition["frames"] as? Int ?? -1) <= (left.rendition["frames"] as? Int ?? 0) + 1,
                    "drawn with nobody watching: \(left.rendition) then \(later.rendition)")
            p.signal(SIGINT)
            #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")
            #expect(try frameSizes(file).allSatisfy { $0 == "320x180" })
            #expect((try decodedFrames(file) ?? 0) >= 45)
            let r = try probe([file, "--reference", scene])
            let seen = try ProbeResult(json: r.out)
            #expect(r.status == 0 && seen.unreadable == 0 && seen.corrupt == 0 && seen.compared >= 45, "\(seen.fidelity)")
        }

        /// The RTSP server serves each rendition at its own path beside the main one: ffmpeg and GStreamer's client
        /// each see that size's own layout, every frame, and the rendition is drawn only from its first viewer on.
        @Test func eachRenditionIsServedAtItsOwnRTSPPath() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let (p, main) = try startLive([scene, "--rendition", "320x180", "--audio", "ticks"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let line = try #require(p.stdout.first { $0.hasPrefix("rendition 320x180") }, "\(p.allOutput)")
            let url = try #require(line.range(of: #"rtsp://\S+"#, options: .regularExpression).map { String(line[$0]) })
            #expect(url == (main ?? "") + "@320x180", "\(line)")
            func rendition() throws -> [String: Any] {
                let (_, body) = http("GET", c + "/v1/status")
                let json = try #require(try? JSONSerialization.jsonObject(with: body) as? [String: Any])
                return try #require((json["renditions"] as? [[String: Any]])?.first, "\(json)")
            }
            let first = try rendition()
            #expect(first["url"] as? String == url)
            #expect(first["frames"] as? Int == 0, "drawn before anyone asked: \(first)")

            let (seen, log) = try ffmpegView(url, frames: 90, into: dir, name: "ffmpeg", scene: scene)
            #expect(!log.contains("error while decoding"), "\(log)")
            #expect(seen.int("frames") == 90 && seen.int("unreadable") == 0 && seen.int("dropped") == 0, "\(seen.total)")
            #expect(seen.compared == 90 && seen.corrupt == 0 && seen.ssimMin > 0.95, "\(seen.fidelity)")
            #expect(try frameSizes(dir.file("ffmpeg.mkv")).allSatisfy { $0 == "320x180" })
            for transport in ["udp", "tcp"] {
                let live = try probe([url, "--transport", transport, "--duration", "3", "--reference", scene, "--av"])
                let gst = try ProbeResult(json: live.out)
                #expect(live.status == 0 && gst.int("frames") >= 60 && gst.compared > 0 && gst.corrupt == 0,
                        "\(transport): \(live.out)\n\(live.err)")
            }
            // Nobody watches any more: it stops being drawn (its count stands still across a second of frames).
            var still = false
            let deadline = Date().addingTimeInterval(30)
            while !still && Date() < deadline {
                let before = try rendition()["frames"] as? Int ?? -1
                // Two more status lines (one every half second): a second of frames.
                let lines = p.allOutput.components(separatedBy: "\n").filter { $0.hasPrefix("status:") }.count
                #expect(p.waitForLines(count: lines + 2, timeout: 10) { $0.hasPrefix("status:") })
                still = try rendition()["frames"] as? Int == before
            }
            let last = try rendition()
            #expect(still, "still drawn with nobody watching: \(last)")
            p.signal(SIGINT)
            #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")
        }

        /// Renditions and the outputs that name them are checked before anything starts, each with its rule.
        @Test(arguments: [
            (["--rendition", "0x234"], "positive"),
            (["--rendition", "417x234"], "even"),
            (["--rendition", "416x234@0"], "kbit/s"),
            (["--rendition", "416x234@fast"], "kbit/s"),
            (["--rendition", "9000x9000"], "largest"),
            (["--rendition", "416x234", "--rendition", "416x234@500"], "twice"),
            (["--rendition", "640x360"], "main picture's size"),
            (["--record", "/tmp/x.mp4@416x234"], "names no rendition"),
            (["--rendition", "320x180", "--record", "/tmp/x.mp4@416x234"], "renditions: 320x180"),
            (["--rendition", "320x180", "--rtsp", "127.0.0.1:0/pip@320x180"], "serves every rendition"),
        ])
        func badRenditionsAreRefusedWithTheRule(extra: [String], words: String) throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let r = try tool([binary, "run", scene, "--size", "640x360", "--duration", "1", "--no-control"] + extra)
            #expect(r.status != 0, "\(extra): \(r.out)")
            #expect(r.err.contains(words), "\(extra): \(r.err)")
            #expect(!FileManager.default.fileExists(atPath: "/tmp/x.mp4"))
        }

        /// A scene with video layers: each rendition shows the layers' pictures in its own boxes (one input per
        /// layer, scaled to each rendition's box), its strip reads, and the plate's colour bars are where the
        /// layout of that size puts them. A web widget's page shows in a rendition's box too.
        @Test func renditionsShowTheVideoLayersAndPagesInTheirOwnBoxes() throws {
            let dir = try TempDir()
            let scene = try dir.write("video.yaml", """
            size: 640x360
            fps: 30
            widgets:
              - {id: bg, type: video, source: "test:smpte", place: background}
              - {id: strip, type: timecode, place: top}
              - {id: pip, type: video, source: "test:ball", place: {inset: top-right, width: 0.3}}
            """)
            let small = dir.file("small.mp4")
            let r = try tool([binary, "run", scene, "--rendition", "320x180", "--record", dir.file("main.mp4"),
                              "--record", small + "@320x180", "--duration", "3", "--no-control"])
            #expect(r.status == 0, "\(r.err)")
            #expect(try frameSizes(small).allSatisfy { $0 == "320x180" })
            let frames = try grayFrames(small, size: PixelSize(width: 320, height: 180), below: 0.5, in: dir)
            #expect(frames.count >= 85 && frames.allSatisfy { $0.frame != nil }, "\(frames.map(\.frame))")
            // Frame 60: the bars under the strip, cyan at x 112 and green at x 157 in a 320 wide picture (seven bars
            // of 320/7), and the inset's black ground at its left edge, where the ball never goes.
            let png = dir.file("small.png")
            #expect(try tool(["ffmpeg", "-v", "error", "-y", "-i", small, "-vf", "select=eq(n\\,60)", "-frames:v", "1", png]).status == 0)
            let rgb = try rgbPixels(png)
            func pixel(_ x: Int, _ y: Int) -> (Int, Int, Int) {
                let i = (y * 320 + x) * 3
                return (Int(rgb[i]), Int(rgb[i + 1]), Int(rgb[i + 2]))
            }
            let cyan = pixel(112, 100), green = pixel(157, 100), inset = pixel(232, 60)
            #expect(cyan.0 < 80 && cyan.1 > 150 && cyan.2 > 150, "cyan bar: \(cyan)")
            #expect(green.0 < 80 && green.1 > 150 && green.2 < 80, "green bar: \(green)")
            #expect(inset.0 < 40 && inset.1 < 40 && inset.2 < 40, "the inset's ground: \(inset)")

            // A web widget: one page, drawn for the main picture's box, shown scaled in the rendition's.
            let web = try dir.write("web.yaml", """
            size: 640x360
            layout: {padding: 0, gap: 0}
            widgets:
              - {id: tc, type: timecode, place: {edge: bottom, size: 0.08}}
              - {id: page, type: web, html: "<body style='margin:0;background:#00ff00'></body>"}
            """)
            let pageSmall = dir.file("page-small.mp4")
            let (wp, _) = try startLive([web, "--rendition", "320x180", "--record", dir.file("page-main.mp4"),
                                         "--record", pageSmall + "@320x180"])
            let c = try #require(controlURL(wp), "\(wp.allOutput)")
            // The page's first picture comes when WebKit has loaded it (longer on a machine's first start): waited for,
            // then a second more of frames recorded.
            #expect(poll(until: { (webStatus(c)["frames"] as? Int ?? 0) > 0 }, timeout: 90), "\(statusJSON(c))")
            #expect(wp.waitForFrame((statusJSON(c)["frame"] as? Int ?? 0) + 30), "\(wp.allOutput)")
            wp.signal(SIGINT)
            #expect(wp.waitForExit() == 0, "\(wp.allOutput)")
            let last = dir.file("page-small.png")
            #expect(try tool(["ffmpeg", "-v", "error", "-y", "-sseof", "-0.2", "-i", pageSmall, "-frames:v", "1", last]).status == 0)
            let page = try rgbPixels(last)
            let i = (80 * 320 + 160) * 3
            #expect(page[i] < 60 && page[i + 1] > 200 && page[i + 2] < 60, "the page's green: \(page[i]), \(page[i + 1]), \(page[i + 2])")
        }
    }
}
