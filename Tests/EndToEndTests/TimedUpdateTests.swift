import Compositor
import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// A widget change asked for a stated frame (issue 51): `PATCH /v1/widgets/ID` with `"at"`.
    @Suite(.serialized) struct TimedUpdateTests {
        /// The change lands first in exactly the frame asked for, in the main picture's recording and in a
        /// rendition's: against the scene before it, only the frames from that one on differ; against the scene after
        /// it, only those before. The answer and the event say the frame. A frame already past is refused with the
        /// earliest one that can be met, and a bad `at` with what to send.
        @Test func aChangeLandsOnTheFrameAskedForInEveryRecording() throws {
            let dir = try TempDir()
            let before = try textScene(dir, "before.yaml", "Before", size: "640x360", strip: 0.08)
            let after = try textScene(dir, "after.yaml", "After the cut", size: "640x360", strip: 0.08)
            let main = dir.file("main.mkv"), small = dir.file("small.mkv")
            let (p, _) = try startLive([before, "--rendition", "320x180", "--record", main, "--record", small + "@320x180"],
                                       rtsp: false)
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let events = try LiveProcess(binary, ["ctl", "--control", c, "events"])
            #expect(events.waitForLine { $0.contains("listening for events") } != nil, "\(events.allOutput)")
            #expect(p.waitForFrames("record:\(main)", atLeast: 15))
            let now = statusJSON(c)["frame"] as? Int ?? 0
            let target = now + 45
            let asked = try ControlClient.local(base: c).request("PATCH", "/v1/widgets/lower", body: Data(
                #"{"text": "After the cut", "at": {"frame": \#(target)}}"#.utf8), contentType: "application/json")
            #expect(asked.status == 200 && String(decoding: asked.body, as: UTF8.self).contains("\"frame\":\(target)"),
                    "\(asked.status) \(String(decoding: asked.body, as: UTF8.self))")
            let landed = events.waitForLine(timeout: 30) { $0.contains("widgetUpdated") && $0.contains("\"frame\":\"\(target)\"") }
            #expect(landed != nil, "\(events.allOutput)")
            // Past: refused with the earliest frame that can be met.
            let past = try ControlClient.local(base: c).request("PATCH", "/v1/widgets/lower", body: Data(
                #"{"text": "Too late", "at": {"frame": \#(now)}}"#.utf8), contentType: "application/json")
            let pastText = String(decoding: past.body, as: UTF8.self)
            #expect(past.status == 409 && pastText.contains("frame \(now) is too near to be met: the earliest that can be is frame"),
                    "\(pastText)")
            let junk = try ControlClient.local(base: c).request("PATCH", "/v1/widgets/lower", body: Data(
                #"{"text": "x", "at": "soon"}"#.utf8), contentType: "application/json")
            #expect(junk.status == 400 && String(decoding: junk.body, as: UTF8.self).contains("{\\\"frame\\\": N}"),
                    "\(String(decoding: junk.body, as: UTF8.self))")
            // Some frames after it, then the end: both recordings finalized.
            #expect(p.waitForFrames("record:\(main)", atLeast: (target - now) + 60))
            events.signal(SIGKILL)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            for file in [main, small] {
                let old = try damage(file, against: before), new = try damage(file, against: after)
                #expect(old.first < target && old.last > target + 30, "\(file): \(old.out)")
                // From the target on, every frame shows the change; before it, none does.
                #expect(old.corrupt == old.last - target + 1, "\(file) against the scene before: \(old.out)")
                #expect(new.corrupt == target - new.first, "\(file) against the scene after: \(new.out)")
            }
        }

        /// A web call on a stated frame: the page is called at once, but its picture is held, so the recording shows
        /// the page as it was up to the frame asked for and the call's change from exactly that frame on (read from the
        /// pixels of every decoded frame, numbered by the strip). A frame too near for a page to draw is refused.
        @Test func aWebCallsPictureLandsOnTheFrameAskedFor() throws {
            let dir = try TempDir()
            let scene = try dir.write("template.yaml", """
            size: 320x180
            fps: 30
            background: "#000000"
            widgets:
              - {id: strip, type: timecode, place: {edge: top, size: 0.1}}
              - id: lower
                type: web
                html: "<body style='margin:0;background:#0000ff'><script>function update(s){ const d = typeof s === 'string' ? JSON.parse(s) : s; document.body.style.background = d.color; }</script></body>"
                data: {color: "#ff0000"}
                place: fill
            """)
            let file = dir.file("held.mkv")
            let (p, _) = try startLive([scene, "--size", "320x180", "--record", file], rtsp: false)
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let events = try LiveProcess(binary, ["ctl", "--control", c, "events"])
            #expect(events.waitForLine { $0.contains("listening for events") } != nil, "\(events.allOutput)")
            let shot = dir.file("now.png")
            #expect(poll(until: {
                (try? ctl(c, ["frame", "-o", shot, "--overwrite"]))?.status == 0 && (try? rgbPixels(shot)).map { $0.count > 3 * (320 * 120 + 160) && $0[3 * (320 * 120 + 160)] > 200 } == true
            }, timeout: 30), "the page did not show red: \(p.allOutput)")
            let now = Int64(statusJSON(c)["frame"] as? Int ?? 0), target = now + 45
            func call(_ at: Int64) throws -> (Int, String) {
                let r = try ControlClient.local(base: c).request("POST", "/v1/web/lower", body: Data(
                    ##"{"call": "update", "data": {"color": "#00ff00"}, "at": {"frame": \##(at)}}"##.utf8),
                    contentType: "application/json")
                return (r.status, String(decoding: r.body, as: UTF8.self))
            }
            let near = try call(now + 1)
            #expect(near.0 == 409 && near.1.contains("too near for a web page to draw it"), "\(near)")
            let held = try call(target)
            #expect(held.0 == 200 && held.1.contains("held for frame \(target)"), "\(held)")
            let landed = events.waitForLine(timeout: 30) { $0.contains("widgetUpdated") && $0.contains("call:update") }
            #expect(landed?.contains("\"frame\":\"\(target)\"") == true, "\(events.allOutput)")
            #expect(p.waitForFrames("record:\(file)", atLeast: Int(target - now) + 60))
            events.signal(SIGKILL)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            // Every decoded frame, by its strip number: red before the target, green from it on.
            let read = try tool([binary, "probe", "--json", "--quiet", file])
            let total = ((try? JSONSerialization.jsonObject(with: Data(read.out.utf8))) as? [String: Any])?["total"] as? [String: Any]
            let first = try #require(total?["firstFrame"] as? Int, "\(read.out)\(read.err)")
            #expect(total?["dropped"] as? Int == 0, "\(read.out)")
            let raw = dir.file("held.rgb")
            #expect(try tool(["ffmpeg", "-v", "error", "-i", file, "-f", "rawvideo", "-pix_fmt", "rgb24", raw]).status == 0)
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
            let frameBytes = 320 * 180 * 3, at = 3 * (320 * 120 + 160)
            let colours = stride(from: 0, to: bytes.count - frameBytes + 1, by: frameBytes).map { o -> Character in
                let (r, g) = (bytes[o + at], bytes[o + at + 1])
                return g > 200 && r < 60 ? "G" : (r > 200 && g < 60 ? "R" : "?")
            }
            let firstGreen = colours.firstIndex(of: "G").map { first + $0 }
            #expect(firstGreen == Int(target), "first green at \(firstGreen ?? -1), asked \(target)")
            let cut = Int(target) - first
            // (The recording's first frames may come before the page's first picture: its background, not red.)
            #expect(cut > 0 && cut < colours.count && !colours[..<cut].contains("G") && colours[cut - 15..<cut].allSatisfy { $0 == "R" }
                    && colours[cut...].allSatisfy { $0 == "G" }, "\(String(colours))")
        }
    }
}
