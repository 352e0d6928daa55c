import Compositor
import Foundation
import Testing
import TestSupport

extension EndToEnd {
    @Suite(.serialized) struct IdleTests {
        /// A run nobody watches neither draws nor encodes (its frames count as idle); a viewer that comes gets the
        /// scene's picture from its first frame (a key frame: nothing unreadable), over UDP and TCP; once it has
        /// gone the run is idle again. The picture asked for over the API is drawn for it all the same.
        @Test func nobodyWatchingCostsNoDrawingAndAViewerGetsThePicture() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let (p, url) = try startLive([scene])
            let u = try #require(url, "\(p.allOutput)")
            let c = try #require(controlURL(p), "\(p.allOutput)")
            func status() throws -> [String: Any] {
                let (_, body) = http("GET", c + "/v1/status")
                return try #require(try? JSONSerialization.jsonObject(with: body) as? [String: Any])
            }
            func number(_ s: [String: Any], _ key: String) -> Int { s[key] as? Int ?? -1 }
            #expect(p.waitForFrame(30))
            let quiet = try status()
            #expect(number(quiet, "rendered") == 0 && number(quiet, "idle") >= 30, "drawn for nobody: \(quiet)")
            // The picture is still there for whoever asks for it.
            let (code, png) = http("GET", c + "/v1/frame.png")
            #expect(code == 200 && png.starts(with: [0x89, 0x50, 0x4E, 0x47]))

            for transport in ["udp", "tcp"] {
                let r = try probe([u, "--transport", transport, "--duration", "2", "--reference", scene])
                let seen = try ProbeResult(json: r.out)
                #expect(r.status == 0 && seen.int("frames") >= 45 && seen.unreadable == 0 && seen.corrupt == 0,
                        "\(transport): \(r.out)\n\(r.err)")
            }
            let watched = try status()
            #expect(number(watched, "rendered") >= 90, "\(watched)")
            // Gone: the count of frames drawn stands still across a second of frames again.
            var still = false
            let deadline = Date().addingTimeInterval(30)
            while !still && Date() < deadline {
                let before = try status()
                #expect(p.waitForFrame(number(before, "frame") + 30))
                still = number(try status(), "rendered") == number(before, "rendered")
            }
            let last = try status()
            #expect(still, "still drawn with nobody watching: \(last)")
            p.signal(SIGINT)
            #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")
            #expect(p.stdout.contains { $0.contains("idle ") && $0.hasPrefix("stopped after") }, "\(p.allOutput)")
        }
    }
}
