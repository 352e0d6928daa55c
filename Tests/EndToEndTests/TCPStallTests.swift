import Foundation
import Testing
import TestSupport

/// The worst latency of each second a probe read, from `probe --json`.
func latencySeconds(_ p: LiveProcess) -> [(second: Int, max: Double)] {
    let json = (try? JSONSerialization.jsonObject(with: Data(p.stdout.joined(separator: "\n").utf8))) as? [String: Any]
    let seconds = json?["seconds"] as? [[String: Any]] ?? []
    return seconds.compactMap { s in
        guard let n = s["second"] as? Int, let l = s["latencyMs"] as? [String: Any], let max = l["max"] as? Double else {
            return nil
        }
        return (n, max)
    }
}

extension EndToEnd {
    @Suite(.serialized) struct TCPStallTests {
        /// A viewer over TCP is as steady as one over UDP. With Nagle's algorithm on the server's side a frame
        /// waited for a delayed ACK: 40 ms more than usual, in one second of every 4-6 over TCP, never over UDP. Two
        /// probes read the same stream at the same moments for 30 s, one over each transport, and the stream is
        /// compared with itself: no second of the TCP viewer's may have its worst frame twice as late as the TCP
        /// viewer's typical second (the median of the seconds' worst) and twice as late as the UDP viewer's worst
        /// in the seconds around it (a machine busy for a moment delays both viewers; a held connection only one).
        @Test func noSecondOverTCPStallsWhereUDPDoesNot() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let (p, url) = try startLive([scene])
            let u = try #require(url, "\(p.allOutput)")
            let probes = try ["tcp", "udp"].map {
                try LiveProcess(binary, ["probe", u, "--transport", $0, "--duration", "30", "--json", "--quiet"])
            }
            for probe in probes { #expect(probe.waitForExit(timeout: 120) == 0, "\(probe.allOutput)") }
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            let tcp = latencySeconds(probes[0]), udp = latencySeconds(probes[1])
            #expect(tcp.count >= 25 && udp.count >= 25, "seconds read: tcp \(tcp.count), udp \(udp.count)")
            let worst = tcp.map(\.max).sorted()
            let typical = worst.isEmpty ? 0 : worst[worst.count / 2]
            let udpMax = Dictionary(udp.map { ($0.second, $0.max) }, uniquingKeysWith: Swift.max)
            let stalls = tcp.filter { s in
                let busy = (s.second - 1...s.second + 1).compactMap { udpMax[$0] }.max() ?? 0
                return s.max > 2 * typical && s.max > 2 * busy
            }
            let said = "TCP seconds over twice the typical second's worst (\(typical) ms) that UDP did not share: "
                + "\(stalls.map { "second \($0.second): \($0.max) ms" }); TCP: \(tcp.map(\.max)); UDP: \(udp.map(\.max))"
            #expect(stalls.isEmpty, "\(said)")
        }
    }
}
