import Testing
@testable import Compositor

/// A soak of its own streams counts an RTSP output's queue drops as that output's, not the source's.
@Suite struct DropTallyTests {
    func status(late: UInt64, atEncoder: UInt64, outputDropped: UInt64) -> LiveSession.Status {
        LiveSession.Status(size: PixelSize(width: 320, height: 180), frame: 0, rendered: 0, repeated: 0, late: late,
                           encoderDropped: atEncoder, encoded: 0,
                           outputs: [.init(id: "rtsp", state: "serving", delivered: 0, dropped: outputDropped, bytes: 0)],
                           viewers: 1, uptime: 0)
    }

    @Test func anOutputsQueueDropsAreItsOwnAndTheLoopsAndEncodersAreTheSources() {
        var tally = DropTally()
        #expect(tally.advance([status(late: 0, atEncoder: 0, outputDropped: 0), status(late: 0, atEncoder: 0, outputDropped: 0)]) == 0)
        // Stream 0: a slow viewer's queue dropped 5 and the loop ran late once; stream 1: its encoder dropped 2.
        #expect(tally.advance([status(late: 1, atEncoder: 0, outputDropped: 5), status(late: 0, atEncoder: 2, outputDropped: 0)]) == 3)
        #expect(tally.outputs == ["stream 0: rtsp": 5, "stream 1: rtsp": 0])
        #expect(tally.outputsThatDropped == ["stream 0: rtsp": 5])
        // The media was replaced when its last viewer left: its counter starts again from 0, and counts from there.
        #expect(tally.advance([status(late: 1, atEncoder: 0, outputDropped: 2), status(late: 0, atEncoder: 2, outputDropped: 4)]) == 0)
        #expect(tally.outputs == ["stream 0: rtsp": 7, "stream 1: rtsp": 4])
        #expect(DropTally.sourceDropped(status(late: 1, atEncoder: 2, outputDropped: 9)) == 3)
    }
}
