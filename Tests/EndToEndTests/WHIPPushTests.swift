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
            let r = try LiveProcess(binary, ["probe", "whep+http://127.0.0.1:\(port)/whep", "--whep-token", "publisher",
                                             "--duration", "5", "--json", "--quiet"])
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
