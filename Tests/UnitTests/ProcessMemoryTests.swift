import Foundation
import Testing
@testable import Compositor

/// The process's anonymous resident memory (RssAnon), in KiB.
private func anonymousKiB() throws -> Int {
    let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") })
    return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
}

@Suite struct ProcessMemoryTests {
    /// What a run leaves when it drops a window's pipeline: freed blocks between blocks still in use. glibc keeps those
    /// pages resident (it gives back only a heap's free top); a run gives them back every 10 s. 96 MiB of 8 KiB
    /// blocks (under the 256 KiB mapped apart), written to, then all but every 16th freed.
    @Test func freedBlocksBetweenLiveOnesGoBackToTheSystem() throws {
        Gst.initialize()
        let count = 12_000, size = 8192
        let blocks = (0..<count).map { _ -> UnsafeMutableRawPointer in
            let p = malloc(size)!
            memset(p, 1, size)
            return p
        }
        defer { for i in stride(from: 0, to: count, by: 16) { free(blocks[i]) } }
        let written = try anonymousKiB()
        for i in 0..<count where i % 16 != 0 { free(blocks[i]) }
        let freed = try anonymousKiB()
        Gst.giveBackFreeMemory()
        let givenBack = try anonymousKiB()
        // 90 MiB freed; at least half of it gone from the resident set (other tests allocate meanwhile).
        #expect(written - givenBack >= 45 * 1024,
                "anonymous KiB: \(written) written, \(freed) after free, \(givenBack) after giving back")
    }

    /// /metrics' heap figures follow what the process allocates and frees: 96 MiB of 4 KiB blocks given out, then
    /// freed (other tests allocate meanwhile: the figures are checked against half of that). Where the freed blocks go
    /// (free inside a heap, or its top given back) is glibc's choice, so only the blocks given out are checked.
    @Test func theAllocatorsFiguresFollowBlocksGivenOutAndFreed() {
        let count = 24_576, size = 4096
        let before = Gst.heapFigures()
        let blocks = (0..<count).map { _ in malloc(size)! }
        let held = Gst.heapFigures()
        for b in blocks { free(b) }
        let after = Gst.heapFigures()
        #expect(held.givenOut - before.givenOut >= 48 << 20, "\(before) \(held)")
        #expect(held.givenOut - after.givenOut >= 48 << 20, "\(held) \(after)")
    }
}
