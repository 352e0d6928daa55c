import Foundation
import Testing
import TestSupport
@testable import Compositor

/// An RTSP media whose pipeline falls behind (its thread run late on a busy machine, a burst after the frame loop
/// caught up) has a second of frames of room, and past that loses whole groups of pictures: what its viewers get
/// goes on with a key frame, never with the middle of a group whose start was lost (garbage in every decoder).
@Suite(.serialized) struct RTSPMediaQueueTests {
    let size = PixelSize(width: 320, height: 180)
    let frame: MediaTime = 33_333_333

    /// Which frames came out of a pipeline or an encoder, in order, and which were key frames.
    final class Frames: @unchecked Sendable {
        private let changed = NSCondition()
        private var seen: [(n: Int, key: Bool)] = []
        func add(_ n: Int, key: Bool) { changed.withLock { seen.append((n, key)); changed.broadcast() } }
        var all: [(n: Int, key: Bool)] { changed.withLock { seen } }
        func wait(until done: ([(n: Int, key: Bool)]) -> Bool, timeout: TimeInterval = 20) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            return changed.withLock {
                while !done(seen) { if !changed.wait(until: deadline) { return done(seen) } }
                return true
            }
        }
    }

    @Test func aMediaBehindLosesWholeGroupsAndGoesOnWithAKeyFrame() throws {
        Gst.initialize()
        let renderer = Renderer(scene: try SceneLoader.load(path: examples + "/info-panel.yaml"), size: size)
        let producer = try FrameProducer(size: size, fps: 30)
        let live = try Encoder(template: try PipelineTemplate.load("encode-x264"), settings: EncoderSettings(), kind: .x264,
                               liveSize: size, fixedSize: nil, fps: 30, rawCaps: producer.caps,
                               onError: { e in Issue.record("\(e)") })
        let rtsp = try RTSPOutput(endpoint: RTSPEndpoint(host: "127.0.0.1", port: 0, path: "/queue"),
                                  template: try PipelineTemplate.load("rtsp-media"), title: "queue", onViewers: { _ in })
        rtsp.source = live
        let encoded = Frames()
        live.subscribe(encoded) { [frame] b, _ in encoded.add(Int((b.pts ?? 0) / frame), key: b.isKeyFrame) }
        live.subscribe(rtsp) { [weak rtsp] b, c in rtsp?.deliver(b, c) }
        // A media as the server prepares one, played by a viewer, whose pipeline is held: nothing leaves its queue.
        let media = try Pipeline(name: "media", launch: "appsrc name=in ! appsink name=out sync=false")
        let viewed = Frames()
        let sink = media.appSink(named: "out", dropWhenFull: false, onSample: { [frame] b, _ in
            viewed.add(Int((b.pts ?? 0) / frame), key: b.isKeyFrame)
        }, onEOS: {})
        #expect(sink != nil)
        let input = try #require(media.appSource(named: "in", maxBuffers: RTSPServer.mediaQueueFrames))
        try media.preroll(timeout: 5)
        rtsp.server.main.onMediaReady?(1, input, nil)
        rtsp.server.main.onMediaPlaying?(1, true)
        defer {
            _ = media.stop(drain: false)
            withExtendedLifetime(sink) {}
            rtsp.stop()
        }

        func feed(_ frames: Range<Int>) throws {
            for n in frames {
                let (buffer, _) = try producer.produce(renderer, at: FrameTime(frame: Int64(n), media: Double(n) / 30, wall: Date()))
                buffer.stamp(pts: MediaTime(n) * frame, duration: frame)
                live.push(buffer, waitingUntil: Date().addingTimeInterval(5))
            }
            #expect(encoded.wait(until: { $0.count >= frames.upperBound }), "the encoder gave \(encoded.all.count)")
        }
        // Held: the queue takes a second of frames, then is full.
        try feed(0..<45)
        #expect(input.queued == RTSPServer.mediaQueueFrames)
        // The media catches up, then the stream goes on.
        try media.play()
        #expect(viewed.wait(until: { $0.count >= RTSPServer.mediaQueueFrames }))
        try feed(45..<100)
        #expect(viewed.wait(until: { $0.last?.n == 99 }), "the media got \(viewed.all.map(\.n))")
        #expect(live.finish())

        let got = viewed.all
        let first = Array(got.prefix(RTSPServer.mediaQueueFrames))
        #expect(first.map(\.n) == Array(0..<RTSPServer.mediaQueueFrames), "the second of frames the queue held")
        let after = Array(got.dropFirst(RTSPServer.mediaQueueFrames))
        let resumed = try #require(after.first)
        #expect(resumed.key, "the media went on with frame \(resumed.n), a key frame")
        #expect(after.map(\.n) == Array(resumed.n...99), "every frame from that key frame on")
        #expect(rtsp.dropped == UInt64(resumed.n - RTSPServer.mediaQueueFrames), "the frames left out, counted")
    }
}
