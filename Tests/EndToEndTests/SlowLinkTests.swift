import Compositor
import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// A real browser on a link slower than the picture, beside a viewer on a fast one (the namespaces of `TwoHomes`,
    /// routed, nothing of them outside the test).
    @Suite(.serialized) struct SlowLinkTests {
        /// The browser's downlink is 300 kbit/s through a short queue, under the picture's bitrate: packets are lost
        /// on the link, and the browser shows fewer pictures, each of them whole (it waits for what it asks for again,
        /// or for a key frame). pipcompose never waits for that viewer (libnice hands a full socket nothing more), and
        /// the viewer beside it, pipcompose's own probe on the home's loopback, gets every frame and every picture as
        /// the scene draws it.
        @Test func aBrowserBehindASlowLinkSeesWholePicturesAndTheViewerBesideItLosesNothing() throws {
            let dir = try TempDir()
            let homes = try TwoHomes(port: freePort())
            defer { homes.tearDown() }
            try homes.setNAT(.none)
            let link = "vr0\(homes.tag)"
            let slowed = try tool(["ip", "netns", "exec", homes.viewerRouter, "tc", "qdisc", "add", "dev", link, "root",
                                   "tbf", "rate", "300kbit", "burst", "16kb", "latency", "200ms"])
            try #require(slowed.status == 0, "\(slowed.err)")
            let scene = try timecodeScene(dir)
            let p = try LiveProcess("/usr/sbin/ip", ["netns", "exec", homes.home, binary, "run", scene, "--size", "640x360",
                                                     "--webrtc", "--control", "0.0.0.0:\(homes.port)",
                                                     "--allow-host", "10.1.0.2"])
            defer { p.signal(SIGINT); _ = p.waitForExit(timeout: 30) }
            let line = try #require(p.waitForLine(timeout: 30) { $0.hasPrefix("webrtc ") }, "\(p.allOutput)")
            let page = String(line.split(separator: " ")[1]).replacingOccurrences(of: "0.0.0.0", with: "10.1.0.2")
            let token = try #require(URLComponents(string: page)?.queryItems?.first { $0.name == "token" }?.value)

            let browser = try LiveProcess("/usr/sbin/ip", ["netns", "exec", homes.viewer, "/usr/bin/python3",
                                                           fixture("web_viewer.py"), page, "--seconds", "8",
                                                           "--timeout", "60", "--leave", "quit"])
            // The viewer beside it joins while the browser's session runs.
            #expect(p.waitForLine(timeout: 90) { $0.contains("webrtc: viewer1 joined") } != nil, "\(p.allOutput)")
            let probe = try LiveProcess("/usr/sbin/ip", ["netns", "exec", homes.home, "env", "PIPCOMPOSE_WHEP_TOKEN=\(token)",
                                                         binary, "probe", "whep+http://127.0.0.1:\(homes.port)/v1/whep",
                                                         "--duration", "5", "--json", "--quiet", "--reference", scene,
                                                         "--max-corrupt", "0"])
            #expect(probe.waitForExit(timeout: 90) == 0, "\(probe.allOutput)\n\(p.allOutput)")
            #expect(browser.waitForExit(timeout: 240) == 0, "\(browser.allOutput)")

            let (total, _) = probeTotal(probe)
            #expect((total["frames"] as? Int ?? 0) > 60, "\(total)")
            #expect(total["dropped"] as? Int == 0 && total["unreadable"] as? Int == 0 && total["freezes"] as? Int == 0,
                    "the viewer beside the slow one: \(total)")
            let json = (try? JSONSerialization.jsonObject(with: Data(probe.stdout.joined(separator: "\n").utf8))) as? [String: Any]
            let fidelity = (json?["fidelity"] as? [String: Any])?["total"] as? [String: Any] ?? [:]
            #expect((fidelity["compared"] as? Int ?? 0) > 30 && fidelity["corrupt"] as? Int == 0, "\(fidelity)")

            // The browser played through the slow link, and every picture it showed read whole.
            let last = browser.stdout.last { $0.hasPrefix("{") } ?? "{}"
            let seen = (try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]) ?? [:]
            let stats = seen["stats"] as? [String: Any] ?? [:]
            #expect(seen["error"] == nil && (stats["readable"] as? Int ?? 0) > 0 && stats["unreadable"] as? Int == 0,
                    "\(seen)\n\(browser.allOutput)")
            // The link was slower than the picture: its queue dropped packets.
            let shown = try tool(["ip", "netns", "exec", homes.viewerRouter, "tc", "-s", "qdisc", "show", "dev", link])
            let dropped = shown.out.components(separatedBy: "dropped ").dropFirst().first.flatMap { Int($0.prefix { $0.isNumber }) }
            #expect((dropped ?? 0) > 0, "the link lost nothing: \(shown.out)")
        }
    }
}
