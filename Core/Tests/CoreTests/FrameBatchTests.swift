import Testing
@testable import CompositorCore

/// A recording's frames go out 100 ms at a time, in order, none lost or held back at the end.
@Suite struct FrameBatchTests {
    /// Frame `n` of a stream at `fps`, stamped as the frame clock stamps it.
    func time(_ n: Int, fps: Int) -> MediaTime { MediaTime(n) * 1_000_000_000 / MediaTime(fps) }

    /// Feeds frames 0..<count and returns the batches that went out.
    func batches(fps: Int, count: Int, span: MediaTime = 100_000_000, maxFrames: Int = 60,
                 times: ((Int) -> MediaTime)? = nil) -> (sent: [[Int]], left: [Int]) {
        var batch = FrameBatch<Int>(span: span, maxFrames: maxFrames)
        var sent: [[Int]] = []
        for n in 0..<count {
            let out = batch.add(n, time: times?(n) ?? time(n, fps: fps))
            if !out.isEmpty { sent.append(out) }
        }
        return (sent, batch.drain())
    }

    @Test func thirtyFramesASecondGoOutFourAtATime() {
        let (sent, left) = batches(fps: 30, count: 10)
        #expect(sent == [[0, 1, 2, 3], [4, 5, 6, 7]])
        #expect(left == [8, 9])
    }

    @Test func sixtyFramesASecondGoOutSevenAtATime() {
        let (sent, left) = batches(fps: 60, count: 15)
        #expect(sent == [[0, 1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 11, 12, 13]])
        #expect(left == [14])
    }

    @Test func aSlowStreamGoesOutInPairs() {
        // Two frames a second: the second is already 500 ms after the first.
        let (sent, left) = batches(fps: 2, count: 5)
        #expect(sent == [[0, 1], [2, 3]])
        #expect(left == [4])
    }

    @Test func aSpanOfZeroSendsEveryFrameAtOnce() {
        let (sent, left) = batches(fps: 30, count: 3, span: 0, maxFrames: 1)
        #expect(sent == [[0], [1], [2]])
        #expect(left.isEmpty)
    }

    @Test func timesThatJumpBackStillGoOutAtTheLimit() {
        // After a switch of encoders a stream may start over at an earlier time: the limit bounds what waits.
        let (sent, left) = batches(fps: 30, count: 7, maxFrames: 3, times: { n in n < 2 ? MediaTime(5_000_000_000) : MediaTime(n) })
        #expect(sent == [[0, 1, 2], [3, 4, 5]])
        #expect(left == [6])
    }

    @Test func drainingTwiceGivesNothingTheSecondTime() {
        var batch = FrameBatch<Int>(span: 100_000_000, maxFrames: 10)
        #expect(batch.add(1, time: 0).isEmpty)
        #expect(batch.drain() == [1])
        #expect(batch.drain().isEmpty)
        // A batch after a drain starts its span anew.
        #expect(batch.add(2, time: 500_000_000).isEmpty)
        #expect(batch.add(3, time: 600_000_000) == [2, 3])
    }
}
