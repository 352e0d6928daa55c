import CGst
import Foundation
import Testing
import TestSupport
@testable import Compositor

/// A consumer whose own queue is full (an RTSP media's, a WebRTC viewer's) loses the frame that did not fit and the
/// rest of its group, and goes on at a key frame once there is room: what leaves its queue is whole groups, never a
/// group whose start is missing.
@Suite struct GroupDropTests {
    /// Frame `n` of a stream with a key frame every 10, stamped with `n` milliseconds.
    func frame(_ n: Int) throws -> MediaBuffer {
        let b = try #require(MediaBuffer.filled(bytes: 16) { $0.initializeMemory(as: UInt8.self, repeating: 0) })
        b.stamp(pts: MediaTime(n) * 1_000_000, duration: 1_000_000)
        if n % 10 != 0 { b.pointer.pointee.mini_object.flags |= GST_BUFFER_FLAG_DELTA_UNIT.rawValue }
        return b
    }

    @Test func aFullQueueLosesTheRestOfTheGroupAndGoesOnAtAKeyFrame() throws {
        Gst.initialize()
        // A live appsrc takes nothing out of its queue until the pipeline plays: a consumer that is behind.
        let pipeline = try Pipeline(name: "held", launch: "appsrc name=in ! appsink name=out sync=false")
        let seen = RTSPMediaQueueTests.Frames()
        let sink = pipeline.appSink(named: "out", dropWhenFull: false, onSample: { b, _ in
            seen.add(Int((b.pts ?? 0) / 1_000_000), key: b.isKeyFrame)
        }, onEOS: {})
        #expect(sink != nil)
        let input = try #require(pipeline.appSource(named: "in", maxBuffers: 5))
        try pipeline.preroll(timeout: 5)
        defer {
            _ = pipeline.stop(drain: false)
            withExtendedLifetime(sink) {}
        }
        var drop = GroupDrop()
        var verdicts: [GroupDrop.Verdict] = []
        func offer(_ frames: Range<Int>) throws {
            for n in frames {
                let b = try frame(n)
                let v = drop.admit(b, into: input)
                verdicts.append(v)
                if v == .push { input.push(b) }
            }
        }
        try offer(0..<25)
        // Room for 5; frame 5 finds it full and its group waits; key frame 10 and 20 find it full too.
        #expect(verdicts == Array(repeating: .push, count: 5) + [.full] + Array(repeating: .rest, count: 4)
                + [.full] + Array(repeating: .rest, count: 9) + [.full] + Array(repeating: .rest, count: 4))
        #expect(input.dropped == 0, "appsrc itself never had to leak a frame")
        try pipeline.play()
        #expect(seen.wait(until: { $0.count >= 5 }), "the queue drained: \(seen.all.map(\.n))")
        verdicts = []
        try offer(25..<35)
        #expect(verdicts == Array(repeating: .rest, count: 5) + Array(repeating: .push, count: 5),
                "the rest of frame 20's group left out, then from key frame 30 on")
        #expect(seen.wait(until: { $0.count >= 10 }))
        #expect(seen.all.map(\.n) == [0, 1, 2, 3, 4, 30, 31, 32, 33, 34], "whole groups, never the middle of one")
        #expect(seen.all.map(\.key) == [true, false, false, false, false, true, false, false, false, false])
        #expect(drop.skipped == 25)
    }
}
