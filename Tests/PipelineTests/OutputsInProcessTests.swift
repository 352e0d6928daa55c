import Foundation
import Testing
import TestSupport
@testable import Compositor

/// Encoders and outputs in this process, without the CLI: frames drawn by a Renderer go through a real x264
/// pipeline into real files and a real RTSP server, read back by ffprobe/ffmpeg.
@Suite(.serialized) struct OutputsInProcessTests {
    let size = PixelSize(width: 320, height: 180)

    /// Draws `count` frames of the demo scene stamped from `first` on and pushes them into `encoders`.
    func feed(_ encoders: [Encoder], producer: FrameProducer, renderer: Renderer, frames: Range<Int>) throws {
        for n in frames {
            let time = FrameTime(frame: Int64(n), media: Double(n) / 30, wall: Date())
            let (buffer, _) = try producer.produce(renderer, at: time)
            buffer.stamp(pts: MediaTime(n) * 33_333_333, duration: 33_333_333)
            for e in encoders { e.push(buffer, waitingUntil: Date().addingTimeInterval(5)) }
        }
    }

    func scene() throws -> Renderer {
        Renderer(scene: try SceneLoader.load(path: examples + "/info-panel.yaml"), size: size)
    }

    /// The info-panel scene, a producer of its frames and a live encoder for them.
    func rig() throws -> (Renderer, FrameProducer, Encoder) {
        let producer = try FrameProducer(size: size, fps: 30)
        return (try scene(), producer, try encoder(rawCaps: producer.caps))
    }

    func encoder(fixed: PixelSize? = nil, rawCaps: String) throws -> Encoder {
        Gst.initialize()
        return try Encoder(template: try PipelineTemplate.load("encode-x264"), settings: EncoderSettings(), kind: .x264,
                           liveSize: size, fixedSize: fixed, fps: 30, rawCaps: rawCaps, onError: { e in Issue.record("\(e)") })
    }

    func recording(_ path: String, format: OutputSpec.FileFormat = .mp4) throws -> PipelineOutput {
        PipelineOutput(id: "record:\(path)", spec: .record(path: path, format: format, policy: .fit),
                       template: try PipelineTemplate.load("record-\(format.rawValue)"),
                       values: ["location": PipelineTemplate.quoted(path)], maxQueued: 60, log: { _ in })
    }

    func probe(_ path: String) throws -> String {
        let r = try runTool(["ffprobe", "-v", "error", "-count_frames", "-show_entries",
                             "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0", path])
        #expect(r.status == 0, "\(r.stderr)")
        return r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func anEncoderFeedsARecordingThatFfprobeReadsWhole() throws {
        let dir = try TempDir()
        let (renderer, producer, live) = try rig()
        let file = dir.file("in-process.mp4")
        let out = try recording(file)
        out.feed(from: live)
        try out.start()
        #expect(out.state == .running)
        try feed([live], producer: producer, renderer: renderer, frames: 0..<60)
        #expect(live.finish())
        out.sourceEnded(live)
        #expect(out.finish() == .finalized)
        #expect(live.encodedFrames == 60)
        #expect(out.delivered == 60 && out.dropped == 0)
        #expect(try probe(file) == "h264,320,180,60")
    }

    /// A recording that fails (a full disk: its file is /dev/full) leaves its encoder. The run lets go of outputs that
    /// ended (`RunTally` keeps the newest), so one still subscribed would be handed every packet, and count as someone
    /// watching the encoder, for the rest of the run.
    @Test func aRecordingThatFailsLeavesItsEncoder() throws {
        let dir = try TempDir()
        let (renderer, producer, live) = try rig()
        let file = dir.file("full.ts")
        #expect(symlink("/dev/full", file) == 0)
        let out = try recording(file, format: .ts)
        out.feed(from: live)
        try out.start()
        #expect(live.subscriberCount == 1)
        var next = 0
        let left = try poll(until: {
            try feed([live], producer: producer, renderer: renderer, frames: next..<(next + 10))
            next += 10
            return out.state == .failed && live.subscriberCount == 0
        }, timeout: 30, every: 0.05)
        #expect(left, "after \(next) frames: \(out.state), \(live.subscriberCount) subscriber(s)")
        #expect(live.finish())
        #expect(out.finish() == .failed)
    }

    /// A recording takes its frames 100 ms at a time; the frames of the last, unfinished batch are written when it
    /// ends (62 frames at 30 fps: 15 batches of four, then two).
    @Test func aRecordingWritesItsLastFramesWhenItEnds() throws {
        let dir = try TempDir()
        let (renderer, producer, live) = try rig()
        let file = dir.file("last.mp4")
        let out = try recording(file)
        out.feed(from: live)
        try out.start()
        try feed([live], producer: producer, renderer: renderer, frames: 0..<62)
        #expect(live.finish())
        out.sourceEnded(live)
        #expect(out.delivered == 60)
        #expect(out.finish() == .finalized)
        #expect(out.delivered == 62 && out.dropped == 0)
        #expect(try probe(file) == "h264,320,180,62")
    }

    /// A fit recording moves to a letterboxing encoder of its own size at a resize and back: every frame once,
    /// one picture size, a file ffprobe decodes whole.
    @Test func aRecordingSwitchesEncodersAtAFrameExactly() throws {
        let dir = try TempDir()
        let (renderer, producer, live) = try rig()
        let file = dir.file("switch.mp4")
        let out = try recording(file)
        out.feed(from: live)
        try out.start()
        try feed([live], producer: producer, renderer: renderer, frames: 0..<30)
        // The render size changes at frame 30: the file's size is kept by an encoder of its own.
        let wide = PixelSize(width: 480, height: 180)
        renderer.resize(to: wide)
        let wider = try FrameProducer(size: wide, fps: 30)
        let fixed = try encoder(fixed: size, rawCaps: wider.caps)
        try live.setRawCaps(wider.caps)
        let at = MediaTime(30) * 33_333_333
        live.requestKeyFrame(at: at)
        fixed.requestKeyFrame(at: at)
        out.switchSource(to: fixed, at: at)
        try feed([live, fixed], producer: wider, renderer: renderer, frames: 30..<60)
        #expect(fixed.finish() && live.finish())
        out.sourceEnded(fixed)
        out.sourceEnded(live)
        #expect(out.finish() == .finalized)
        #expect(try probe(file) == "h264,320,180,60")
    }

    /// A key frame asked for at a time comes at the first frame of that time, also after other key frames were
    /// forced (x264enc in GStreamer 1.22 grants a request that names a time at once or never), and a viewer's
    /// comes half a second after the last key frame, not at the next regular one.
    @Test func aKeyFrameAskedForATimeComesAtThatFrame() throws {
        let (renderer, producer, live) = try rig()
        let out = FrameLog()
        let frame: MediaTime = 33_333_333
        live.subscribe(out, requestKeyFrame: true) { b, _ in out.add(Int((b.pts ?? 0) / frame), key: b.isKeyFrame) }
        // Each request is made once the frames before it came out of the encoder, as a viewer's would be.
        func feed(to end: Int) throws {
            try self.feed([live], producer: producer, renderer: renderer, frames: out.count..<end)
            #expect(out.wait(for: end), "the encoder gave \(out.count) of \(end) frames")
        }
        try feed(to: 5)
        live.requestKeyFrame(at: 8 * frame)
        try feed(to: 12)
        live.requestKeyFrame(at: 17 * frame)
        try feed(to: 20)
        live.requestKeyFrame(at: 25 * frame)
        try feed(to: 30)
        // The last key frame was at 25: a viewer's comes at the first frame half a second later or more (41: the
        // frames here are 33 333 333 ns apart, so 40 is 5 ns short).
        live.requestKeyFrameForViewer()
        try feed(to: 45)
        #expect(live.finish())
        // x264 starts its 30-frame group of pictures over at each forced key frame: no regular one before 55.
        #expect(out.keys == [0, 8, 17, 25, 41])
    }

    /// Frames an encoder handed out: how many, and which were key frames.
    final class FrameLog: @unchecked Sendable {
        private let changed = NSCondition()
        private var seen = 0
        private var keyFrames: [Int] = []
        func add(_ n: Int, key: Bool) {
            changed.withLock {
                seen += 1
                if key { keyFrames.append(n) }
                changed.broadcast()
            }
        }
        var count: Int { changed.withLock { seen } }
        var keys: [Int] { changed.withLock { keyFrames } }
        func wait(for n: Int, timeout: TimeInterval = 10) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            return changed.withLock {
                while seen < n { if !changed.wait(until: deadline) { return seen >= n } }
                return true
            }
        }
    }

    @Test func rtspOutputServesTheEncodersFramesToFfprobe() throws {
        let (renderer, producer, live) = try rig()
        let rtsp = try RTSPOutput(endpoint: RTSPEndpoint(host: "127.0.0.1", port: 0, path: "/in-process"),
                                  template: try PipelineTemplate.load("rtsp-media"), title: "in process", onViewers: { _ in })
        rtsp.source = live
        live.subscribe(rtsp) { [weak rtsp] b, c in rtsp?.deliver(b, c) }
        try rtsp.start()
        defer { rtsp.stop() }
        // A viewer runs while frames are fed at the frame rate; ffprobe returns once it read the stream's header.
        let viewer = BackgroundTool(["ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-show_entries",
                                   "stream=codec_name,width,height", "-of", "csv=p=0", rtsp.url])
        // Frames paced by the frame clock, as the frame loop paces them, for at most 20 s.
        let clock = FrameClock(fps: 30)
        clock.start()
        var n: Int64 = 0
        while viewer.isRunning && n < 30 * 20 {
            _ = clock.wait(until: clock.time(ofFrame: n))
            try feed([live], producer: producer, renderer: renderer, frames: Int(n)..<Int(n + 1))
            n += 1
        }
        let result = viewer.wait()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "h264,320,180")
        #expect(rtsp.delivered > 0)
        #expect(live.finish())
    }

    @Test func aDelayLineHoldsEveryFrameAtLeastItsDelayAndInOrder() throws {
        let producer = try FrameProducer(size: size, fps: 30)
        let renderer = try scene()
        let received = NSCondition()
        var out: [MediaTime] = []
        let line = DelayLine(delayMilliseconds: 40, capacity: 8) { b, _ in
            received.withLock { out.append(b.pts ?? 0); received.broadcast() }
        }
        var pushedAt: [UInt64] = []
        for n in 0..<12 {
            let (b, _) = try producer.produce(renderer, at: FrameTime(frame: Int64(n), media: 0, wall: Date()))
            b.stamp(pts: MediaTime(n), duration: 1)
            pushedAt.append(DelayLine.monotonicNow())
            line.push(b.shallowCopy(), nil)
        }
        line.drain(timeout: 2)
        // Twelve pushed at once into room for eight: four dropped and counted, the rest out in order.
        #expect(line.dropped == 4)
        #expect(received.withLock { out } == Array(0..<8).map(MediaTime.init))
        let held = try #require(line.heldMilliseconds)
        #expect(held.samples == 8 && held.p50 >= 40)
        line.stop()
    }

    @Test func aPipelineThatCannotParseNamesTheProblem() throws {
        Gst.initialize()
        #expect { try Pipeline(name: "bad", launch: "videotestsrc ! no-such-element ! fakesink") } throws: { error in
            "\(error)".contains("no-such-element")
        }
        let p = try Pipeline(name: "unwritable", launch: "videotestsrc num-buffers=5 ! filesink location=/nonexistent/dir/x")
        #expect(throws: GstError.self) { try p.play() }
        p.stop(drain: false)
        let ok = try Pipeline(name: "ends", launch: "videotestsrc num-buffers=5 ! fakesink")
        try ok.play()
        #expect(ok.waitForEOS(timeout: 10))
        ok.stop(drain: false)
    }
}

/// A program run to completion on another thread while the test goes on.
///
/// `@unchecked Sendable`: `result` is written once, before `done` is signalled.
final class BackgroundTool: @unchecked Sendable {
    private var result: (status: Int32, stdout: String, stderr: String)?
    private let done = DispatchSemaphore(value: 0)

    init(_ arguments: [String]) {
        DispatchQueue.global().async { [self] in
            result = (try? runProgram("/usr/bin/env", arguments)).map { ($0.status, $0.stdout, $0.stderr) }
            done.signal()
        }
    }

    var isRunning: Bool {
        guard done.wait(timeout: .now()) == .success else { return true }
        done.signal()
        return false
    }

    func wait() -> (status: Int32, stdout: String, stderr: String) {
        done.wait()
        done.signal()
        return result ?? (-1, "", "could not run")
    }
}
