import Compositor
import Foundation
import Testing
import TestSupport

/// `probe --reference` of a file: the frames it read (first, last) and how many differ from the scene.
private func damage(_ file: String, against scene: String) throws -> (first: Int, last: Int, corrupt: Int, out: String) {
    let r = try tool([binary, "probe", "--json", "--quiet", file, "--reference", scene])
    let report = (try? JSONSerialization.jsonObject(with: Data(r.out.utf8))) as? [String: Any]
    let total = report?["total"] as? [String: Any], fidelity = (report?["fidelity"] as? [String: Any])?["total"] as? [String: Any]
    return (total?["firstFrame"] as? Int ?? -1, total?["lastFrame"] as? Int ?? -1, fidelity?["corrupt"] as? Int ?? -1,
            r.out + r.err)
}

extension EndToEnd {
    /// A widget change asked for a stated frame (issue 51): `PATCH /v1/widgets/ID` with `"at"`.
    @Suite(.serialized) struct TimedUpdateTests {
        /// The change lands first in exactly the frame asked for, in the main picture's recording and in a
        /// rendition's: against the scene before it, only the frames from that one on differ; against the scene after
        /// it, only those before. The answer and the event say the frame. A frame already past is refused with the
        /// earliest one that can be met, and a bad `at` with what to send.
        @Test func aChangeLandsOnTheFrameAskedForInEveryRecording() throws {
            let dir = try TempDir()
            func scene(_ name: String, _ text: String) throws -> String {
                try dir.write(name, """
                size: 640x360
                fps: 30
                widgets:
                  - {id: strip, type: timecode, place: {edge: top, size: 0.08}}
                  - {id: lower, type: text, text: "\(text)", place: fill}
                """)
            }
            let before = try scene("before.yaml", "Before"), after = try scene("after.yaml", "After the cut")
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
    }
}
