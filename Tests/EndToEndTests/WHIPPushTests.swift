import Foundation
import Testing
import TestSupport

/// aiortc's WHIP server (Tests/Fixtures/aiortc_whep.py without --rtsp) on `port`: what is published there is read
/// back by WHEP viewers.
func aiortcWHIP(port: Int, _ args: [String] = []) throws -> LiveProcess {
    let server = try LiveProcess(aiortcPython, [fixture("aiortc_whep.py"), "--port", String(port)] + args)
    #expect(server.waitForLine(timeout: 30) { $0.hasPrefix("listening ") } != nil, "\(server.allOutput)")
    return server
}

/// The frames a probe's status lines counted so far ("   3s  30.0 fps  …", one a second on stderr).
func secondsFrames(_ probe: LiveProcess) -> Int {
    probe.stderr.compactMap { line -> Int? in
        guard let r = line.range(of: #"^\s*\d+s\s+[\d.]+ fps"#, options: .regularExpression) else { return nil }
        return Double(line[r].split(separator: " ").dropLast().last ?? "").map { Int($0) }
    }.reduce(0, +)
}

extension EndToEnd {
    @Suite(.serialized) struct WHIPPushTests {
        /// `--push whip+http://` into aiortc, read back over WHEP by the probe, in H.264 or VP8 as aiortc encodes it
        /// again for its viewers: every frame, readable; Ctrl-C ends the session on the server.
        @Test(arguments: ["h264", "vp8"]) func aPushIntoAiortcIsReadBackWithEveryFrame(codec: String) throws {
            let dir = try TempDir()
            let port = freePort()
            let server = try aiortcWHIP(port: port, ["--token", "publisher", "--codec", codec])
            defer { server.signal(SIGKILL) }
            let (p, _) = try startLive([try timecodeScene(dir), "--push", "whip+http://127.0.0.1:\(port)/whip"],
                                       environment: ["PIPCOMPOSE_WHIP_TOKEN": "publisher"])
            #expect(server.waitForLine(timeout: 30) { $0.hasPrefix("published ") } != nil, "\(server.allOutput)\n\(p.allOutput)")
            // Read until 100 frames came, however long aiortc takes to answer and start sending (its encoder is
            // Python's, on the same 2 cores: a loaded machine once took it 4.7 s, which left a 5 s probe 0.2 s of
            // frames), then stopped: the totals come out on Ctrl-C.
            let r = try LiveProcess(binary, ["probe", "whep+http://127.0.0.1:\(port)/whep", "--whep-token", "publisher",
                                             "--json"])
            let read = poll(until: { secondsFrames(r) >= 100 }, timeout: 60, every: 0.2)
            #expect(read, "\(r.allOutput)\n\(server.allOutput)")
            r.signal(SIGINT)
            #expect(r.waitForExit(timeout: 60) == 0, "\(r.allOutput)\n\(server.allOutput)")
            let (total, p50) = probeTotal(r)
            #expect((total["frames"] as? Int ?? 0) > 90 && p50 != nil, "\(total)")
            #expect(total["dropped"] as? Int == 0 && total["unreadable"] as? Int == 0, "\(total)")
            #expect(server.stdout.contains("viewer 2 gets video/\(codec.uppercased())"), "\(server.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            #expect(server.waitForLine(timeout: 10) { $0 == "ended 1" } != nil, "\(server.allOutput)")
        }

        /// A WHIP server that is down, or that refuses the token, fails the push alone: it says why and retries, the
        /// recording beside it goes on and is whole; once the server is up with the right token, the push publishes.
        @Test func aWHIPServerThatIsDownOrRefusesIsRetriedAndTheRunGoesOn() throws {
            let dir = try TempDir()
            let port = freePort()
            let file = dir.file("beside.mkv")
            let (p, _) = try startLive([try timecodeScene(dir), "--push", "whip+http://127.0.0.1:\(port)/whip", "--record", file],
                                       environment: ["PIPCOMPOSE_WHIP_TOKEN": "publisher"])
            #expect(p.waitForLine { $0.contains("cannot reach the WHIP server") && $0.contains("retrying in") } != nil, "\(p.allOutput)")
            let refusing = try aiortcWHIP(port: port, ["--token", "another"])
            #expect(p.waitForLine(timeout: 40) { $0.contains("WHIP server answered 401: wrong token") && $0.contains("retrying in") } != nil,
                    "\(p.allOutput)")
            refusing.signal(SIGKILL)
            #expect(refusing.waitForExit() != nil)
            let server = try aiortcWHIP(port: port, ["--token", "publisher"])
            defer { server.signal(SIGKILL) }
            #expect(server.waitForLine(timeout: 60) { $0.hasPrefix("published ") } != nil, "\(server.allOutput)\n\(p.allOutput)")
            #expect(p.waitForLine { $0.contains("whip") && $0.contains("restarted (attempt") } != nil, "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            let frames = try #require(summaryFrames(p, "record:\(file)"), "\(p.allOutput)")
            #expect(try decodedFrames(file) == frames, "\(p.allOutput)")
        }
    }
}
