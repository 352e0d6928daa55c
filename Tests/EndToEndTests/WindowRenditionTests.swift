import Compositor
import Foundation
import Testing
import TestSupport

/// `POST /v1/whep/ID/window`, and what it answered, as JSON.
private func window(_ control: String, _ viewer: String, _ body: String) -> (status: Int, json: [String: Any]) {
    let (status, data) = http("POST", control + "/v1/whep/\(viewer)/window", body: Data(body.utf8))
    return (status, (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? ["text": String(decoding: data, as: UTF8.self)])
}

extension EndToEnd {
    /// Browsers that follow their windows each get a picture laid out for their own size (issue 35, item 3).
    @Suite(.serialized) struct WindowRenditionTests {
        /// Through the API, with real WHEP sessions (Chromium's offer): a window gets a rendition made for it, the
        /// next one past `--max-renditions` the nearest picture (and why), `{"main": true}` the main picture; bad
        /// requests are refused with what to send; the rendition is dropped once no session sees it, and the main
        /// picture never changed.
        @Test func aWindowGetsARenditionMadeForItWithinTheLimit() throws {
            let dir = try TempDir()
            let (p, _) = try startLive([try timecodeScene(dir), "--webrtc", "--max-renditions", "1",
                                        "--webrtc-connect-timeout", "120"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let offer = try String(contentsOf: chromiumOffer, encoding: .utf8)
            let first = try whep(c, "POST", sdp: offer), second = try whep(c, "POST", sdp: offer)
            #expect(first.status == 201 && second.status == 201, "\(first) \(second)")

            let made = window(c, "viewer1", #"{"width": 480, "height": 270}"#)
            #expect(made.status == 200 && made.json["picture"] as? String == "480x270" && made.json["made"] as? Bool == true
                    && made.json["exact"] as? Bool == true && made.json["note"] == nil, "\(made)")
            // Its first key frame is the switch (the session takes frames whether or not its browser is there).
            #expect(p.waitForLine { $0.contains("webrtc: viewer1 sees rendition 480x270") } != nil, "\(p.allOutput)")
            #expect(p.allOutput.contains("rendition 480x270 made for viewer1's window"), "\(p.allOutput)")
            var status = statusJSON(c)
            let windows = status["windows"] as? [[String: Any]] ?? []
            #expect(windows.count == 1 && windows.first?["size"] as? String == "480x270"
                    && windows.first?["viewers"] as? [String] == ["viewer1"], "\(windows)")
            let sessions = (status["webrtc"] as? [String: Any])?["sessions"] as? [[String: Any]] ?? []
            #expect(sessions.map { $0["picture"] as? String } == ["480x270", "main"], "\(sessions)")

            // The limit is one: the next window sees the nearest picture there is, and is told why.
            let near = window(c, "viewer2", #"{"width": 320, "height": 180}"#)
            #expect(near.status == 200 && near.json["picture"] as? String == "480x270" && near.json["made"] as? Bool == false
                    && near.json["exact"] as? Bool == false
                    && (near.json["note"] as? String ?? "").contains("--max-renditions"), "\(near)")
            #expect(p.waitForLine { $0.contains("webrtc: viewer2 sees rendition 480x270") } != nil, "\(p.allOutput)")
            let again = window(c, "viewer1", #"{"width": 480, "height": 270}"#)
            #expect(again.json["made"] as? Bool == false && again.json["exact"] as? Bool == true, "\(again)")
            let mainAgain = window(c, "viewer2", #"{"main": true}"#)
            #expect(mainAgain.json["picture"] as? String == "main" && mainAgain.json["width"] as? Int == 640, "\(mainAgain)")
            #expect(p.waitForLine { $0.contains("webrtc: viewer2 sees the main picture (640x360)") } != nil, "\(p.allOutput)")

            // Refused, with what to send.
            let odd = window(c, "viewer1", #"{"width": 17, "height": 10}"#)
            #expect(odd.status == 400, "\(odd)")
            let junk = window(c, "viewer1", #"{"size": "big"}"#)
            #expect(junk.status == 400 && (junk.json["error"].map { "\($0)" } ?? "").contains("main"), "\(junk)")
            let nobody = window(c, "viewer99", #"{"width": 480, "height": 270}"#)
            #expect(nobody.status == 404, "\(nobody)")

            // Nobody sees it any more: dropped, and costs nothing.
            #expect(try whep(c, "DELETE", "/v1/whep/viewer1").status == 200)
            #expect(p.waitForLine { $0.contains("rendition 480x270 dropped: no browser sees it") } != nil, "\(p.allOutput)")
            status = statusJSON(c)
            #expect((status["windows"] as? [Any])?.isEmpty == true, "\(status)")
            #expect(status["width"] as? Int == 640 && status["height"] as? Int == 360, "\(status)")
            #expect(!p.allOutput.contains("resized to"), "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// A window dragged about: sixty sizes asked for as fast as the API answers, from two sessions at once. Each
        /// gets its size every time (the rendition it leaves is replaced, not counted against `--max-renditions`), at
        /// most the limit plus the two each session is leaving exist at once, each session ends on the picture of
        /// its last size with the others dropped, the stream keeps its frames, and once the sessions end every
        /// rendition made for them is dropped.
        @Test func aWindowDraggedAboutStaysWithinTheLimitAndLeavesNothingBehind() throws {
            let dir = try TempDir()
            let (p, _) = try startLive([try timecodeScene(dir), "--webrtc", "--max-renditions", "2",
                                        "--webrtc-connect-timeout", "120"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let offer = try String(contentsOf: chromiumOffer, encoding: .utf8)
            #expect(try whep(c, "POST", sdp: offer).status == 201 && whep(c, "POST", sdp: offer).status == 201)
            let most = Latest<Int>(0), refusals = Latest<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { k in
                for i in 0..<30 {
                    let w = 160 + 2 * ((i * 37 + k * 11) % 200), h = 90 + 2 * ((i * 23 + k * 7) % 100)
                    let r = window(c, "viewer\(k + 1)", #"{"width": \#(w), "height": \#(h)}"#)
                    if r.status != 200 || r.json["picture"] as? String != "\(w)x\(h)" {
                        let line = "\(w)x\(h): \(r.status) \(r.json)"
                        refusals.update { $0.append(line) }
                    }
                    let made = (statusJSON(c)["windows"] as? [Any])?.count ?? 99
                    most.update { $0 = max($0, made) }
                }
            }
            #expect(refusals.value.isEmpty, "\(refusals.value)")
            #expect(most.value <= 2 + 2 * 2, "renditions at once: \(most.value)")
            // The last size each asked for: the picture each ends on, the only one left once both switched.
            let last = [window(c, "viewer1", #"{"width": 400, "height": 226}"#), window(c, "viewer2", #"{"width": 400, "height": 226}"#)]
            #expect(last.allSatisfy { $0.status == 200 && $0.json["picture"] as? String == "400x226" }, "\(last)")
            func windows() -> [String] { (statusJSON(c)["windows"] as? [[String: Any]] ?? []).compactMap { $0["size"] as? String } }
            #expect(poll(until: { windows() == ["400x226"] }, timeout: 30), "\(statusJSON(c))")
            let before = statusJSON(c)["frame"] as? Int ?? 0
            #expect(p.waitForFrame(before + 30), "\(p.allOutput)")
            #expect(try whep(c, "DELETE", "/v1/whep/viewer1").status == 200 && whep(c, "DELETE", "/v1/whep/viewer2").status == 200)
            #expect(poll(until: { (statusJSON(c)["windows"] as? [Any])?.isEmpty == true }, timeout: 30),
                    "\(statusJSON(c))")
            #expect(statusJSON(c)["dropped"] as? Int == 0, "\(statusJSON(c))")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// Two headless Chromium pages with windows of different sizes, both following them: each decodes a picture
        /// of its own size, and neither sees a size change the other caused (the first keeps watching until the
        /// second has switched and left). The main picture stays as it was.
        @Test func twoBrowsersEachSeeTheirOwnPictureAndNeitherChangesTheOther() throws {
            let dir = try TempDir()
            let (p, _) = try startLive([try timecodeScene(dir), "--webrtc"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let page = try #require(pageURL(p), "\(p.allOutput)")
            let secondDone = dir.file("second-done")
            // What the first page saw, as JSON (handed over from its thread).
            let first = Latest<Data>(Data())
            let firstDone = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                let seen = (try? browserViewer(page, ["--seconds", "2", "--resize", "480x270", "--until-file", secondDone])) ?? [:]
                let json = (try? JSONSerialization.data(withJSONObject: seen)) ?? Data()
                first.update { $0 = json }
                firstDone.signal()
            }
            #expect(p.waitForLine(timeout: 120) { $0.contains("webrtc: viewer1 sees rendition 480x270") } != nil, "\(p.allOutput)")
            let second = try browserViewer(page, ["--seconds", "2", "--resize", "320x180"])
            let during = statusJSON(c)
            try Data().write(to: URL(fileURLWithPath: secondDone))
            #expect(firstDone.wait(timeout: .now() + 150) == .success)
            let a = (try? JSONSerialization.jsonObject(with: first.value) as? [String: Any]) ?? [:], b = second
            #expect(a["error"] == nil && b["error"] == nil, "\(a)\n\(b)\n\(p.allOutput)")
            func sizes(_ seen: [String: Any]) -> [String] {
                ((seen["stats"] as? [String: Any])?["sizes"] as? [[String: Any]] ?? []).map { "\($0["width"] ?? 0)x\($0["height"] ?? 0)" }
            }
            // Each saw the main picture, then its own, and nothing else.
            #expect(sizes(a) == ["640x360", "480x270"], "\(a)")
            #expect(sizes(b) == ["640x360", "320x180"], "\(b)")
            #expect((a["picture"] as? [String: Any])?["picture"] as? String == "480x270", "\(a)")
            #expect((b["picture"] as? [String: Any])?["picture"] as? String == "320x180", "\(b)")
            // Both read the strip in their own pictures after the switch (30 strips each, checked by the fixture).
            for seen in [a, b] {
                let stats = seen["stats"] as? [String: Any] ?? [:]
                #expect((stats["readable"] as? Int ?? 0) > 60, "\(stats)")
                // The switch shows no moment twice: the first frame of the new picture comes after the last of the
                // old one (the page reads both frame numbers from the strip).
                let steps = (stats["sizes"] as? [[String: Any]] ?? []).dropFirst().compactMap { $0["step"] as? Int }
                #expect(steps.count == 1 && steps.allSatisfy { $0 >= 1 }, "\(stats)")
                print("frame steps at the switch: \(steps)")
            }
            #expect(p.allOutput.contains("webrtc: viewer2 sees rendition 320x180"), "\(p.allOutput)")
            #expect(!p.allOutput.contains("resized to"), "\(p.allOutput)")
            #expect(during["width"] as? Int == 640, "\(during)")
            // Both gone: both renditions dropped.
            #expect(p.waitForLine { $0.contains("rendition 480x270 dropped") } != nil, "\(p.allOutput)")
            #expect(p.waitForLine { $0.contains("rendition 320x180 dropped") } != nil, "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }
    }
}
