import Compositor
import Foundation
import Testing
import TestSupport

/// Runs the browser fixture (headless Chromium through Selenium) and returns what the page saw.
/// The fixture reads the status with the owner's token (stored for the page's host and port) to wait, as it leaves,
/// until its session has ended: a watch link's page may not read it.
func browserViewer(_ url: String, _ args: [String] = [], timeout: TimeInterval = 150) throws -> [String: Any] {
    let owner = URLComponents(string: url).flatMap { u -> String? in
        guard let scheme = u.scheme, let host = u.host, let port = u.port else { return nil }
        return try? ControlClient.local(base: "\(scheme)://\(host):\(port)").token
    }
    let r = try LiveProcess("/usr/bin/python3", [fixture("web_viewer.py"), url] + args
                                                + (owner.map { ["--status-token", $0] } ?? []))
    #expect(r.waitForExit(timeout: timeout) == 0, "\(r.allOutput)")
    let line = r.stdout.last { $0.hasPrefix("{") } ?? "{}"
    return (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? ["output": r.allOutput]
}

/// A WHEP request with an SDP (or any) body: status, headers, body text.
func whep(_ control: String, _ method: String, _ path: String = "/v1/whep", sdp: String? = nil,
          contentType: String = "application/sdp", anonymous: Bool = false)
    throws -> (status: Int, headers: [String: String], text: String) {
    let client = anonymous ? try ControlClient(base: control, token: nil) : try ControlClient.local(base: control)
    let r = try client.request(method, path, body: sdp.map { Data($0.utf8) }, contentType: contentType)
    return (r.status, r.headers, String(decoding: r.body, as: UTF8.self))
}

/// The live page's URL a started instance printed (`webrtc URL/?token=… (watch link …)`): it only watches.
func pageURL(_ p: LiveProcess) -> String? {
    p.stdout.first { $0.hasPrefix("webrtc ") }.flatMap { $0.split(separator: " ").dropFirst().first.map(String.init) }
}

/// The page with the control token, which drives (what `pipcompose ctl page` prints).
func ownerPageURL(_ p: LiveProcess) throws -> String {
    let c = try #require(controlURL(p), "\(p.allOutput)")
    return ControlServer.pageURL(base: c, token: try ownerToken(c))
}

/// A value several threads of a test append to.
final class Latest<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func update(_ change: (inout Value) -> Void) { lock.withLock { change(&stored) } }
}

let chromiumOffer = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/chromium-156-offer.sdp")

extension EndToEnd {
    @Suite(.serialized) struct WebRTCTests {
        /// The page in headless Chromium plays the stream over WHEP (the video's time advances, its width is the
        /// stream's, the page reads the timecode strip in every picture), then "follow this window" with a new
        /// size for the video element gets it a picture of its own, laid out for that size (the main picture stays
        /// as it was); leaving the page ends its session, and the rendition made for it goes.
        @Test func aBrowserPlaysThePageAndItsWindowGetsItsOwnPicture() throws {
            let dir = try TempDir()
            let (p, _) = try startLive([try timecodeScene(dir), "--webrtc"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            #expect(p.stdout.contains { $0.hasPrefix("webrtc \(c)/") }, "\(p.allOutput)")
            let shot = dir.file("video.png")
            let seen = try browserViewer(try #require(pageURL(p)), ["--seconds", "3", "--resize", "480x270", "--screenshot", shot])
            #expect(seen["error"] == nil, "\(seen)\n\(p.allOutput)")
            let times = seen["currentTime"] as? [Double] ?? []
            #expect(times.count == 2 && times[1] - times[0] > 2, "currentTime \(times)")
            #expect(seen["videoWidth"] as? Int == 640 && seen["videoHeight"] as? Int == 360, "\(seen)")
            let stats = seen["stats"] as? [String: Any] ?? [:]
            // The strip reads in the browser's pictures: the picture is the scene's, not garbage.
            #expect((stats["readable"] as? Int ?? 0) > 60, "\(stats)")
            #expect(seen["resizedTo"] as? [Int] == [480, 270], "\(seen)")
            let picture = seen["picture"] as? [String: Any] ?? [:]
            #expect(picture["picture"] as? String == "480x270" && picture["made"] as? Bool == true, "\(seen)")
            #expect(p.waitForLine { $0.contains("webrtc: viewer1 sees rendition 480x270") } != nil, "\(p.allOutput)")
            #expect(!p.allOutput.contains("resized to"), "\(p.allOutput)")
            let sizes = (stats["sizes"] as? [[String: Any]] ?? []).map { "\($0["width"] ?? 0)x\($0["height"] ?? 0)" }
            #expect(sizes == ["640x360", "480x270"], "\(sizes)")
            #expect((stats["width"] as? Int) == 480, "\(stats)")
            // The screenshot of the video element holds the scene: bright strip cells and text on the dark background.
            let rgb = try rgbPixels(shot)
            let bright = stride(from: 0, to: rgb.count - 2, by: 3).filter { rgb[$0] > 200 && rgb[$0 + 1] > 200 && rgb[$0 + 2] > 200 }.count
            #expect(bright > 2000, "bright pixels in the screenshot: \(bright)")
            // Leaving the page ended its session at once.
            #expect(p.waitForLine(timeout: 15) { $0.contains("webrtc: viewer1 left: ended by the viewer") } != nil, "\(p.allOutput)")
            #expect(p.waitForLine { $0.contains("rendition 480x270 dropped: no browser sees it") } != nil, "\(p.allOutput)")
            let status = statusJSON(c)
            #expect(status["width"] as? Int == 640 && (status["windows"] as? [Any])?.isEmpty == true, "\(status)")
            let webrtc = status["webrtc"] as? [String: Any]
            #expect(webrtc?["viewers"] as? Int == 0 && webrtc?["joined"] as? Int == 1, "\(String(describing: webrtc))")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// With sound, the browser receives the track as Opus beside the picture, and hears the ticks (energy).
        @Test func aBrowserHearsTheSoundAsOpus() throws {
            let dir = try TempDir()
            let (p, _) = try startLive([try timecodeScene(dir), "--webrtc", "--audio", "ticks"])
            let seen = try browserViewer(try #require(pageURL(p), "\(p.allOutput)"), ["--seconds", "3", "--unmute"])
            #expect(seen["error"] == nil, "\(seen)\n\(p.allOutput)")
            let stats = seen["stats"] as? [String: Any] ?? [:]
            let audio = stats["audio"] as? [String: Any] ?? [:]
            #expect(audio["codec"] as? String == "audio/opus", "\(stats)")
            // 20 ms packets for over 3 s, decoded, with the ticks' energy in them.
            #expect((audio["packets"] as? Int ?? 0) > 150 && (audio["samples"] as? Int ?? 0) > 48000 * 3
                    && (audio["energy"] as? Double ?? 0) > 0, "\(audio)")
            #expect((stats["readable"] as? Int ?? 0) > 60, "\(stats)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// The browser's own Picture-in-Picture window drives the render size, the explicit way for one viewer:
        /// opened from the owner's page (`ctl page`) with "follow this window: resize the shared picture", the main
        /// picture becomes the PiP window's size.
        @Test func thePictureInPictureWindowDrivesTheRenderSize() throws {
            let dir = try TempDir()
            let (p, _) = try startLive([try timecodeScene(dir), "--webrtc"])
            let seen = try browserViewer(try ownerPageURL(p), ["--seconds", "1", "--pip", "--follow", "shared"])
            #expect(seen["error"] == nil && seen["followedPip"] as? Bool == true, "\(seen)\n\(p.allOutput)")
            let pip = seen["pipWindow"] as? [Int] ?? []
            #expect(pip.count == 2 && pip[0] % 2 == 0 && pip[1] % 2 == 0 && pip[0] < 640, "\(pip)")
            #expect(p.waitForLine { $0.contains("resized to \(pip.first ?? 0)x\(pip.last ?? 0)") } != nil, "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// A browser that offers only VP8 gets VP8 (the stream decoded and encoded again, only while it watches) and
        /// sees the same picture: the page reads the strip in every frame. H.264 viewers beside it keep theirs.
        @Test func aBrowserWithoutH264GetsVP8WhileItWatches() throws {
            let dir = try TempDir()
            let (p, _) = try startLive([try timecodeScene(dir), "--webrtc"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let events = try LiveProcess(binary, ["ctl", "--control", c, "events"])
            #expect(events.waitForLine { $0.contains("listening for events") } != nil)
            let seen = try browserViewer(try ownerPageURL(p) + "&codec=vp8", ["--seconds", "3"])
            #expect(seen["error"] == nil, "\(seen)\n\(p.allOutput)")
            let stats = seen["stats"] as? [String: Any] ?? [:]
            #expect(stats["codec"] as? String == "video/VP8", "\(stats)")
            #expect((stats["readable"] as? Int ?? 0) > 60 && (seen["videoWidth"] as? Int) == 640, "\(seen)")
            // The branch opened for it and closed after it.
            #expect(events.waitForLine(timeout: 15) { $0.contains("vp8Stopped") } != nil, "\(events.allOutput)")
            #expect(events.allOutput.contains("vp8Started") && events.allOutput.contains("\"codec\":\"VP8\""), "\(events.allOutput)")
            // And an H.264 browser after it is served H.264.
            let h264 = try browserViewer(try #require(pageURL(p)), ["--seconds", "1"])
            #expect((h264["stats"] as? [String: Any])?["codec"] as? String == "video/H264", "\(h264)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// Off loopback the page and WHEP need the token, in a header or `?token=` (a browser cannot send headers
        /// when it opens a page).
        @Test func thePageNeedsTheTokenOffLoopback() throws {
            let dir = try TempDir()
            let port = freePort()
            let (p, _) = try startLive([try timecodeScene(dir), "--webrtc", "--control", "0.0.0.0:\(port)",
                                        "--control-token", "s3cret"])
            let c = "http://127.0.0.1:\(port)"
            let (status, body) = http("GET", c + "/", anonymous: true)
            #expect(status == 401 && String(decoding: body, as: UTF8.self).contains("?token="), "\(status)")
            let offer = try String(contentsOf: chromiumOffer, encoding: .utf8)
            #expect(try whep(c, "POST", sdp: offer, anonymous: true).status == 401)
            let seen = try browserViewer(c + "/?token=s3cret", ["--seconds", "1"])
            #expect(seen["error"] == nil && (seen["videoWidth"] as? Int) == 640, "\(seen)\n\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// Refusals, each with a status and a message that says what to do; a session that never connects is
        /// dropped after the timeout and counted; over the limit is 503; an RTSP viewer watching all along
        /// loses nothing.
        @Test func badOffersLimitsAndDeadSessionsLeaveTheOtherViewersAlone() throws {
            let dir = try TempDir()
            let (p, url) = try startLive([try timecodeScene(dir), "--webrtc", "--webrtc-max-viewers", "1",
                                          "--webrtc-connect-timeout", "3"])
            let c = try #require(controlURL(p)), u = try #require(url)
            let watcher = try startWatcher(u, scene: try timecodeScene(dir))
            let offer = try String(contentsOf: chromiumOffer, encoding: .utf8)

            let notSDP = try whep(c, "POST", sdp: "hello")
            #expect(notSDP.status == 400 && notSDP.text.contains("not an SDP offer"), "\(notSDP)")
            let json = try whep(c, "POST", sdp: offer, contentType: "application/json")
            #expect(json.status == 415 && json.text.contains("Content-Type"), "\(json)")
            // An offer of AV1 only: nothing we can send.
            let av1Only = offer.split(separator: "\r\n", omittingEmptySubsequences: false)
                .filter { !($0.hasPrefix("a=rtpmap:") || $0.hasPrefix("a=fmtp:") || $0.hasPrefix("a=rtcp-fb:")) || $0.hasPrefix("a=rtpmap:45 ") }
                .map { $0.hasPrefix("m=video") ? "m=video 9 UDP/TLS/RTP/SAVPF 45" : String($0) }.joined(separator: "\r\n")
            let av1 = try whep(c, "POST", sdp: av1Only)
            #expect(av1.status == 400 && av1.text.contains("the offer has AV1") && av1.text.contains("H.264") && av1.text.contains("VP8"), "\(av1)")
            let unknown = try whep(c, "DELETE", "/v1/whep/viewer99")
            #expect(unknown.status == 404 && unknown.text.contains("viewer99"), "\(unknown)")
            // Trickle ICE: a fragment that is not one, and candidates sent as something else.
            let orphan = try whep(c, "PATCH", "/v1/whep/viewer1", sdp: "a=candidate:1", contentType: "application/trickle-ice-sdpfrag")
            #expect(orphan.status == 400 && orphan.text.contains("line 1"), "\(orphan)")
            let asSDP = try whep(c, "PATCH", "/v1/whep/viewer1", sdp: "m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=candidate:1")
            #expect(asSDP.status == 415 && asSDP.text.contains("trickle-ice-sdpfrag"), "\(asSDP)")

            // A real offer (Chromium's), whose browser is gone: answered, then dropped when it never connects.
            let first = try whep(c, "POST", sdp: offer)
            #expect(first.status == 201 && first.text.hasPrefix("v=0") && first.text.contains("a=candidate:")
                    && first.text.contains("H264/90000"), "\(first)")
            #expect(first.headers["location"] == "/v1/whep/viewer1", "\(first.headers)")
            let second = try whep(c, "POST", sdp: offer)
            #expect(second.status == 503 && second.text.contains("--webrtc-max-viewers"), "\(second)")
            #expect(p.waitForLine(timeout: 20) { $0.contains("viewer1 left: never connected within 3 s") } != nil, "\(p.allOutput)")
            // Two offers at the same moment for the one place left: one is answered, the other refused.
            let statuses = Latest<[Int]>([])
            let locations = Latest<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                if let r = try? whep(c, "POST", sdp: offer) {
                    statuses.update { $0.append(r.status) }
                    if let l = r.headers["location"] { locations.update { $0.append(l) } }
                }
            }
            #expect(statuses.value.sorted() == [201, 503], "\(statuses.value)")
            let ended = try whep(c, "DELETE", locations.value.first ?? "/v1/whep/none")
            #expect(ended.status == 200, "\(ended)")
            let webrtc = statusJSON(c)["webrtc"] as? [String: Any]
            #expect(webrtc?["timedOut"] as? Int == 1 && webrtc?["refused"] as? Int == 2 && webrtc?["joined"] as? Int == 2
                    && webrtc?["viewers"] as? Int == 0, "\(String(describing: webrtc))")
            let metrics = String(decoding: http("GET", c + "/metrics").1, as: UTF8.self)
            #expect(metrics.contains("pipcompose_webrtc_viewers 0") && metrics.contains("pipcompose_webrtc_timed_out_total 1"), "\(metrics)")

            let watched = try stopWatcher(watcher)
            #expect(watched.int("dropped") == 0 && watched.int("repeated") == 0 && watched.int("unreadable") == 0,
                    "\(watched.total)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")

            // Refused before anything starts.
            let noControl = try tool([binary, "run", "--webrtc", "--no-control", "--duration", "1"])
            #expect(noControl.status != 0 && noControl.err.contains("drop --no-control"), "\(noControl.err)")
            let (plain, _) = try startLive([try timecodeScene(dir)])
            let pc = try #require(controlURL(plain))
            let off = http("GET", pc + "/")
            #expect(off.0 == 404 && String(decoding: off.1, as: UTF8.self).contains("run --webrtc"))
            plain.signal(SIGINT)
            #expect(plain.waitForExit() == 0)
        }
    }
}
