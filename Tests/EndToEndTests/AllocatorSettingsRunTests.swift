import Foundation
import Testing
import TestSupport

extension EndToEnd {
    @Suite(.serialized) struct SliceAllocatorRunTests {
        /// `run` starts over once with `G_SLICE=always-malloc` (GLib 2.74 reads it only as it loads): the process the
        /// test started, by its own id and under its own name, has it, draws and serves the scene's picture. A user's
        /// own `G_SLICE` (here an empty one, GLib's own slices) is left as it was.
        @Test func aRunTakesGLibsSlicesFromMallocUnlessTheUserChose() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let inherited = ProcessInfo.processInfo.environment["G_SLICE"]
            for (given, expected) in [(nil, inherited ?? "always-malloc"), ("", "")] as [(String?, String)] {
                let (p, url) = try startLive([scene], environment: given.map { ["G_SLICE": $0] } ?? [:])
                let u = try #require(url, "\(p.allOutput)")
                let pid = p.process.processIdentifier
                let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
                let slices = environ.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
                    .filter { $0.hasPrefix("G_SLICE=") }
                #expect(slices == ["G_SLICE=" + expected], "G_SLICE given: \(given ?? "none")")
                // Started again from its own file: ps, pgrep and top still call it by its name.
                let name = try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
                #expect(name == "pipcompose\n")
                let r = try probe([u, "--duration", "1", "--reference", scene])
                let seen = try ProbeResult(json: r.out)
                #expect(r.status == 0 && seen.int("frames") >= 15 && seen.corrupt == 0 && seen.unreadable == 0,
                        "\(r.out)\n\(r.err)")
                p.signal(SIGINT)
                #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")
            }
        }
    }
}
