import Foundation
import Testing
import TestSupport

/// Debian's Janus with deploy/janus's configuration, copied with ports of its own; ended by its pid.
final class JanusServer {
    let dir: TempDir
    let httpPort: Int, videoPort: Int, audioPort: Int
    let process: LiveProcess

    /// `iceAddress`: the one address it offers browsers (Janus 1.1.2 never offers loopback; deploy/janus/README.md).
    init(iceAddress: String) throws {
        dir = try TempDir()
        (httpPort, videoPort, audioPort) = (freePort(), freeRTPPorts(), freeRTPPorts())
        for name in ["janus.jcfg", "janus.transport.http.jcfg", "janus.plugin.streaming.jcfg"] {
            var text = try String(contentsOfFile: deployFolder + "/janus/" + name, encoding: .utf8)
            for (key, shipped, mine) in [("port", 8088, httpPort), ("videoport", 5004, videoPort), ("audioport", 5006, audioPort),
                                         ("videortcpport", 5005, videoPort + 1), ("audiortcpport", 5007, audioPort + 1)] {
                text = text.replacingOccurrences(of: "\t\(key) = \(shipped)\n", with: "\t\(key) = \(mine)\n")
            }
            _ = try dir.write(name, text)
        }
        let streaming = try String(contentsOfFile: dir.file("janus.plugin.streaming.jcfg"), encoding: .utf8)
        let http = try String(contentsOfFile: dir.file("janus.transport.http.jcfg"), encoding: .utf8)
        #expect(streaming.contains("videoport = \(videoPort)\n") && streaming.contains("audioport = \(audioPort)\n")
                && streaming.contains("videortcpport = \(videoPort + 1)\n")
                && http.contains("port = \(httpPort)\n"), "the shipped ports moved: rewrite them here too")
        process = try LiveProcess("/usr/bin/janus", Self.arguments(dir, iceAddress))
    }

    /// ICE ports from the kernel's ephemeral range (the test's own servers take ports below it).
    static func arguments(_ dir: TempDir, _ iceAddress: String) -> [String] {
        let range = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))?
            .split(whereSeparator: \.isWhitespace).joined(separator: "-") ?? "32768-60999"
        return ["--configs-folder=\(dir.path)", "--ice-enforce-list=\(iceAddress)", "--rtp-port-range=\(range)"]
    }

    /// Another Janus in `dir` on the same ports, as a restarted service would be.
    init(restarting other: JanusServer, iceAddress: String) throws {
        dir = other.dir
        (httpPort, videoPort, audioPort) = (other.httpPort, other.videoPort, other.audioPort)
        process = try LiveProcess("/usr/bin/janus", Self.arguments(dir, iceAddress))
    }

    var api: String { "http://127.0.0.1:\(httpPort)/janus" }
    var rtp: String { "rtp://127.0.0.1:\(videoPort)?audio=\(audioPort)" }

    /// Janus logs its mountpoint's listeners, then its HTTP transport.
    func waitUntilServing(timeout: TimeInterval = 20) -> Bool {
        process.waitForLine(timeout: timeout) { $0.contains("HTTP webserver started (port \(self.httpPort)") } != nil
    }

    func stop() {
        process.signal(SIGTERM)
        if process.waitForExit(timeout: 10) == nil { process.signal(SIGKILL) }
    }
}

/// The machine's first non-loopback IPv4 address, where Janus offers ICE to a browser on the same machine.
func hostAddress() throws -> String? {
    let r = try tool(["hostname", "-I"])
    return r.out.split(whereSeparator: \.isWhitespace).map(String.init).first { $0.contains(".") && !$0.hasPrefix("127.") }
}

extension EndToEnd {
    @Suite(.serialized) struct JanusTests {
        /// Past one machine: one pipcompose pushes RTP to two Janus instances that come up after it; headless
        /// Chromium watches both mountpoints with janus.js (web/janus.html) and reads the strip in each: both pictures
        /// are right, show the same frame numbers, and carry the sound. The browsers' requests for a key frame reach
        /// pipcompose's encoder through Janus.
        @Test func browsersOnTwoJanusInstancesSeeTheSameFrames() throws {
            let ice = try #require(try hostAddress(), "Janus offers ICE only on a non-loopback address; this machine has none")
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let a = try JanusServer(iceAddress: ice), b = try JanusServer(iceAddress: ice)
            defer { a.stop(); b.stop() }
            // pipcompose first: nothing listens on those ports yet, which UDP does not notice. A key frame only every
            // 33 s (the longest --keyint), after the browsers' 25 s: they get their first ones by asking (PLI),
            // through Janus, over RTCP.
            let (p, _) = try startLive([scene, "--push", a.rtp, "--push", b.rtp, "--audio", "ticks", "--keyint", "1000"],
                                       rtsp: false)
            #expect(a.waitUntilServing() && b.waitUntilServing(), "\(a.process.allOutput)\n\(b.process.allOutput)")
            #expect(p.waitForFrames("push:\(b.rtp)", atLeast: 30), "\(p.allOutput)")
            let viewer = try LiveProcess("/usr/bin/python3", [fixture("janus_viewer.py"), a.api, b.api, "--seconds", "4",
                                                              "--min-readable", "30", "--timeout", "25"])
            #expect(viewer.waitForExit(timeout: 120) == 0, "\(viewer.allOutput)")
            let out = viewer.stdout.joined(separator: "\n")
            let json = try #require((try? JSONSerialization.jsonObject(with: Data(out.utf8))) as? [String: Any],
                                    "\(viewer.allOutput)")
            #expect(json["error"] == nil, "\(json)\n\(a.process.allOutput.suffix(2000))")
            let servers = (json["servers"] as? [[String: Any]]) ?? []
            #expect(servers.count == 2, "\(json)")
            for s in servers {
                // Every picture the page read carries a whole strip: nothing broken from joining mid-stream.
                #expect((s["readable"] as? Int ?? 0) > 60 && s["unreadable"] as? Int == 0, "\(s)")
                #expect((s["codec"] as? String ?? "").contains("H264") && s["width"] as? Int == 640, "\(s)")
                let received = s["received"] as? [String: Any] ?? [:]
                #expect(received["lost"] as? Int == 0, "packets lost between pipcompose, Janus and the browser: \(s)")
                let audio = s["audio"] as? [String: Any] ?? [:]
                #expect((audio["packets"] as? Int ?? 0) > 50 && (audio["codec"] as? String ?? "").contains("opus"), "\(s)")
                print("janus \(s["server"] ?? ""): latency p50 \(s["p50"] ?? "-") p99 \(s["p99"] ?? "-") ms, "
                      + "first picture \(s["firstPictureMs"] ?? "-") ms")
            }
            // One encode: at any moment both browsers' videos show the same frame, give or take a frame or two
            // (each Janus and each video element runs on its own).
            let moment = json["sameMoment"] as? [String: Any] ?? [:]
            #expect((moment["samples"] as? Int ?? 0) > 5 && (moment["spreadMax"] as? Int ?? 99) <= 3, "\(moment)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// A Janus that dies (SIGKILL) and is started again on the same ports: pipcompose's push never noticed, and
        /// a browser on the new Janus sees the picture.
        @Test func aJanusThatDiesAndComesBackServesAgain() throws {
            let ice = try #require(try hostAddress(), "Janus offers ICE only on a non-loopback address; this machine has none")
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let first = try JanusServer(iceAddress: ice)
            #expect(first.waitUntilServing(), "\(first.process.allOutput)")
            let (p, _) = try startLive([scene, "--push", first.rtp, "--audio", "ticks"], rtsp: false)
            #expect(first.process.waitForLine(timeout: 20) { $0.contains("New video stream") } != nil, "\(first.process.allOutput)")
            #expect(p.waitForFrames("push:\(first.rtp)", atLeast: 30), "\(p.allOutput)")
            first.process.signal(SIGKILL)
            _ = first.process.waitForExit(timeout: 10)
            let delivered = try #require(p.stdout.last { $0.contains(" push:\(first.rtp): ") }.flatMap(LiveProcess.frames(in:)))
            // Sent into nothing for a while: still running, nothing dropped.
            #expect(p.waitForFrames("push:\(first.rtp)", atLeast: delivered + 60), "\(p.allOutput)")
            let again = try JanusServer(restarting: first, iceAddress: ice)
            defer { again.stop() }
            #expect(again.waitUntilServing(), "\(again.process.allOutput)")
            let viewer = try LiveProcess("/usr/bin/python3", [fixture("janus_viewer.py"), again.api, "--seconds", "2",
                                                              "--min-readable", "30", "--timeout", "30"])
            #expect(viewer.waitForExit(timeout: 90) == 0, "\(viewer.allOutput)")
            let json = (try? JSONSerialization.jsonObject(with: Data(viewer.stdout.joined(separator: "\n").utf8))) as? [String: Any]
            let seen = (json?["servers"] as? [[String: Any]])?.first ?? [:]
            #expect(json?["error"] == nil && (seen["readable"] as? Int ?? 0) > 30 && seen["unreadable"] as? Int == 0,
                    "\(json ?? [:])\n\(again.process.allOutput.suffix(1500))")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            let line = p.stdout.last { $0.hasPrefix("push:\(first.rtp):") } ?? ""
            #expect(line.contains("dropped 0") && !p.allOutput.contains("push:\(first.rtp): failed"), "\(p.allOutput)")
        }
    }
}
