import Foundation
import Testing
import TestSupport

/// A scene whose frames carry the timecode strip.
func timecodeScene(_ dir: TempDir) throws -> String {
    try dir.write("timecode.yaml", """
    title: Probe source
    size: 640x360
    fps: 30
    widgets:
      - id: strip
        type: timecode
        place: {edge: top, size: 0.12}
      - id: label
        type: text
        text: probe me
        place: fill
    """)
}

/// Runs `pipcompose probe … --json --quiet` and returns its exit status and the report's `total`.
func probe(_ args: [String], timeout: TimeInterval = 60) throws -> (status: Int32, total: [String: Any], out: String, err: String) {
    let r = try tool([binary, "probe", "--json", "--quiet"] + args, timeout: timeout)
    let json = (try? JSONSerialization.jsonObject(with: Data(r.out.utf8))) as? [String: Any]
    return (r.status, (json?["total"] as? [String: Any]) ?? [:], r.out, r.err)
}

extension EndToEnd {
    @Suite(.serialized) struct ProbeTests {
        /// Frames the pattern every:10 leaves out strictly between two frame numbers.
        func everyTenth(between a: Int, and b: Int) -> Int { b > a + 1 ? (a + 1..<b).filter { $0 % 10 == 9 }.count : 0 }

        @Test func injectedDelayIsMeasuredAndInjectedDropsAreCountedOverTCPUDPAndAFile() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            var p50: [String: [Int: Double]] = ["tcp": [:], "udp": [:]]
            for delay in [0, 40] {
                let file = dir.file("source-\(delay).ts")
                let (p, url) = try startLive([scene, "--inject-drops", "every:10", "--inject-delay-ms", String(delay),
                                              "--record", file])
                let u = try #require(url, "\(p.allOutput)")
                for transport in ["tcp", "udp"] {
                    let r = try probe([u, "--transport", transport, "--duration", "4"])
                    #expect(r.status == 0, "\(transport): \(r.err)")
                    let first = try #require(r.total["firstFrame"] as? Int, "\(r.out)\n\(r.err)")
                    let last = try #require(r.total["lastFrame"] as? Int)
                    #expect(last - first > 90, "\(transport): frames \(first)…\(last)")
                    #expect(r.total["dropped"] as? Int == everyTenth(between: first, and: last),
                            "\(transport) delay \(delay): \(r.out)")
                    #expect(r.total["unreadable"] as? Int == 0 && r.total["repeated"] as? Int == 0, "\(r.out)")
                    let latency = try #require(r.total["latencyMs"] as? [String: Any], "\(r.out)")
                    p50[transport]![delay] = latency["p50"] as? Double
                }
                if delay == 40 {
                    // A threshold crossed is exit status 3, with the reason.
                    let strict = try tool([binary, "probe", u, "--duration", "2", "--quiet", "--max-latency-ms", "20"])
                    #expect(strict.status == 3, "\(strict.out)\n\(strict.err)")
                    #expect(strict.out.contains("FAILED: latency p99"), "\(strict.out)")
                }
                p.signal(SIGINT)
                #expect(p.waitForExit() == 0)
                // The source lost nothing on its own: every gap the probe saw was put there on purpose.
                #expect(p.stdout.contains { $0.contains("dropped 0 (") && $0.contains("left out on purpose") },
                        "\(p.allOutput)")
                // The recording has the same gaps, counted exactly, and no latency (it is not live).
                let f = try probe([file])
                #expect(f.status == 0, "\(f.err)")
                let first = try #require(f.total["firstFrame"] as? Int, "\(f.out)")
                let last = try #require(f.total["lastFrame"] as? Int)
                #expect(f.total["dropped"] as? Int == everyTenth(between: first, and: last), "\(f.out)")
                #expect(f.total["latencyMs"] == nil)
                #expect(f.total["unreadable"] as? Int == 0)
            }
            // The injected 40 ms shows in the median within ±2 ms, over both transports.
            for transport in ["tcp", "udp"] {
                let base = try #require(p50[transport]![0]), delayed = try #require(p50[transport]![40])
                #expect(abs(delayed - base - 40) <= 2, "\(transport): p50 \(base) ms → \(delayed) ms")
            }
        }

        @Test func aStreamWithoutAStripIsReportedAsSuchAndBadURLsAreRefused() throws {
            let (p, url) = try startLive([])   // the demo scene has no timecode strip
            let u = try #require(url)
            let r = try tool([binary, "probe", u, "--duration", "2", "--quiet"])
            #expect(r.status == 0, "\(r.err)")
            #expect(r.out.contains("no timecode strip in"), "\(r.out)")
            #expect(r.out.contains("fps"), "\(r.out)")
            // Asking for a drop threshold on a stream that cannot show drops fails, and says why.
            let strict = try tool([binary, "probe", u, "--duration", "2", "--quiet", "--max-drops", "0"])
            #expect(strict.status == 3 && strict.out.contains("drops unknown"), "\(strict.out)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)

            let port = freePort()
            let unreachable = try tool([binary, "probe", "rtsp://127.0.0.1:\(port)/nothing", "--timeout", "5"])
            #expect(unreachable.status == 1, "\(unreachable.out)")
            #expect(unreachable.err.contains("rtsp://127.0.0.1:\(port)/nothing"), "\(unreachable.err)")
            let missing = try tool([binary, "probe", "/no/such/file.ts"])
            #expect(missing.status != 0 && missing.err.contains("neither a URL"), "\(missing.err)")
            let noHost = try tool([binary, "probe", "rtsp:///pip"])
            #expect(noHost.status != 0 && noHost.err.contains("has no host"), "\(noHost.err)")
            let transport = try tool([binary, "probe", "rtsp://127.0.0.1:1/x", "--transport", "sctp"])
            #expect(transport.status != 0 && transport.err.contains("tcp or udp"), "\(transport.err)")
        }
    }
}
