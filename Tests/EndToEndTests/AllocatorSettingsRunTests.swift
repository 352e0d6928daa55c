import Foundation
import Testing
import TestSupport

extension EndToEnd {
    @Suite(.serialized) struct AllocatorSettingsRunTests {
        /// `run` starts over once with `G_SLICE=always-malloc` (GLib 2.74 reads it only as it loads) and glibc's
        /// per-thread caches off (`GLIBC_TUNABLES`, read as the process starts): the process the test started, by its
        /// own id and under its own name, has them, draws and serves the scene's picture. A user's own settings (here
        /// an empty `G_SLICE`, GLib's own slices, and a cache size of their own) are left as they were.
        @Test func aRunSetsItsAllocatorsUnlessTheUserChose() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let inherited = ProcessInfo.processInfo.environment
            let off = "glibc.malloc.tcache_count=0"
            let tunables = switch inherited["GLIBC_TUNABLES"] {
            case nil, "": off
            case let given?: given.contains("glibc.malloc.tcache_count=") ? given : given + ":" + off
            }
            let ours = ["G_SLICE": inherited["G_SLICE"] ?? "always-malloc", "GLIBC_TUNABLES": tunables]
            let theirs = ["G_SLICE": "", "GLIBC_TUNABLES": "glibc.malloc.tcache_count=3"]
            for (given, expected) in [([:], ours), (theirs, theirs)] as [([String: String], [String: String])] {
                let (p, url) = try startLive([scene], environment: given)
                let u = try #require(url, "\(p.allOutput)")
                let pid = p.process.processIdentifier
                let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
                let set = environ.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
                    .filter { $0.hasPrefix("G_SLICE=") || $0.hasPrefix("GLIBC_TUNABLES=") }.sorted()
                #expect(set == expected.map { "\($0.key)=\($0.value)" }.sorted(), "given: \(given)")
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
