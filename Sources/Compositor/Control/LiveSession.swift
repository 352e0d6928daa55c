import Foundation

/// Remembers the last viewer count, to tell a join from a leave.
final class ViewerCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var last = 0
    func update(_ n: Int) -> Bool { lock.withLock { defer { last = n }; return n > last } }
}

/// A running pipcompose: the renderer and frame loop, one encoder per distinct output size, the outputs.
///
/// Start-up checks everything that can be checked before the first frame (pipelines parse, encoders exist,
/// files open, the RTSP port is free). At run time each output fails alone. `stop()` drains every encoder
/// and finalizes every file before returning.
public final class LiveSession: @unchecked Sendable {
    public let options: LiveOptions
    public let renderer: Renderer
    public let playback: Playback
    public let events = EventBus()
    private let log: @Sendable (String) -> Void
    private let lock = NSLock()
    private var encoderKind = EncoderSettings.Kind.x264
    private var encoderTemplate: PipelineTemplate?
    private var liveEncoder: Encoder?
    private var fixedEncoders: [PixelSize: Encoder] = [:]
    public private(set) var pipelineOutputs: [PipelineOutput] = []
    public private(set) var rtsp: RTSPOutput?
    private(set) var loop: FrameLoop?
    private var splitCounters: [String: Int] = [:]
    private var dropWatch: DispatchSourceTimer?
    /// Frames the live encoder produced, kept after it is gone for the end-of-run summary.
    private var finalEncoded: UInt64 = 0
    private var finalDelayHeld: LatencySummary?
    /// Frames dropped at encoders that have stopped (fixed encoders after a resize back, all at the end).
    private var retiredEncoderDrops: UInt64 = 0
    private let started = Date()

    public init(options: LiveOptions, log: @escaping @Sendable (String) -> Void) {
        self.options = options
        self.log = log
        var scene = options.scene
        scene.fps = options.fps
        renderer = Renderer(scene: scene, size: options.size, warn: { log("warning: \($0)") })
        playback = Playback(timeline: scene.timeline)
    }

    /// Builds every pipeline's text and checks what can be checked without starting. Returns the text of
    /// each pipeline by name, which is what `--dump-pipeline` prints.
    @discardableResult
    public func prepare() throws -> [(String, String)] {
        Gst.initialize()
        encoderKind = try options.encoder.resolved(warn: { log("warning: \($0)") })
        let template = try PipelineTemplate.load("encode-\(encoderKind == .x264 ? "x264" : encoderKind.rawValue)")
        encoderTemplate = template
        var dump: [(String, String)] = []
        dump.append(("encoder", try template.render(options.encoder.values(for: encoderKind, liveSize: options.size,
                                                                                fixed: nil, fps: options.fps))))
        var pipelineOutputs: [PipelineOutput] = []
        for (i, spec) in options.outputs.enumerated() {
            switch spec {
            case .rtsp(let endpoint):
                guard rtsp == nil else { throw OutputSpec.Invalid(description: "only one --rtsp endpoint per process") }
                let events = self.events
                let counter = ViewerCounter()
                let out = try RTSPOutput(endpoint: endpoint, template: try PipelineTemplate.load("rtsp-media"),
                                         title: options.scene.title, onViewers: { [log] n in
                    log("rtsp: \(n) viewer(s)")
                    let joined = counter.update(n)
                    events.publish(joined ? "viewerJoined" : "viewerLeft", ["viewers": String(n)])
                })
                rtsp = out
                dump.append(("rtsp \(endpoint.url)", out.mediaLaunch))
            default:
                let out = try makePipelineOutput(spec, index: i, path: nil)
                dump.append((out.id, try out.prepare()))
                pipelineOutputs.append(out)
            }
        }
        self.pipelineOutputs = pipelineOutputs
        return dump
    }

    private func makePipelineOutput(_ spec: OutputSpec, index: Int, path override: String?) throws -> PipelineOutput {
        let out = try newPipelineOutput(spec, index: index, path: override)
        out.title = options.scene.title
        let events = self.events
        out.onEvent = { type, details in events.publish(type, details) }
        return out
    }

    /// The output for `spec`, from its pipeline file, not yet started.
    private func newPipelineOutput(_ spec: OutputSpec, index: Int, path override: String?) throws -> PipelineOutput {
        let tags = PipelineTemplate.titleTags(options.scene.title)
        switch spec {
        case .record(let path, let format, _):
            let location = override ?? path
            return PipelineOutput(id: "record:\(location)", spec: spec,
                               template: try PipelineTemplate.load("record-\(format.rawValue)"),
                               values: ["location": PipelineTemplate.quoted(location)],
                               maxQueued: options.fps * 2, log: log)
        case .push(let url, let scheme):
            return PipelineOutput(id: "push:\(url)", spec: spec, template: try PipelineTemplate.load("push-\(scheme)"),
                               values: ["location": PipelineTemplate.quoted(url)],
                               maxQueued: options.fps / 2, log: log)
        case .custom(let path):
            return PipelineOutput(id: "pipeline:\(URL(fileURLWithPath: path).lastPathComponent)#\(index)", spec: spec,
                               template: try PipelineTemplate.load(path: path),
                               values: ["tags": tags, "title": PipelineTemplate.quoted(options.scene.title)],
                               maxQueued: options.fps, log: log)
        case .rtsp:
            throw OutputSpec.Invalid(description: "internal: rtsp is not a chain output")
        }
    }

    private func makeEncoder(fixed: PixelSize?, rawCaps: String) throws -> Encoder {
        let e = try Encoder(template: encoderTemplate!, settings: options.encoder, kind: encoderKind,
                            liveSize: renderer.size, fixedSize: fixed, fps: options.fps, rawCaps: rawCaps,
                            onError: { [log] e in log("encoder \(fixed.map { "\($0)" } ?? "live"): \(e)") })
        e.delay(by: options.injectDelayMs, fps: options.fps)
        return e
    }

    /// Starts serving, recording and pushing, then the frame loop.
    public func start() throws {
        if encoderTemplate == nil { try prepare() }
        // The RTSP port first: a port in use stops us before any file is created.
        try rtsp?.start()
        let loop = try FrameLoop(renderer: renderer, fps: options.fps, duration: options.duration, playback: playback,
                                 encoders: { [weak self] in self?.allEncoders() ?? [] },
                                 willResize: { [weak self] size, caps, time in
                                     self?.willResize(to: size, rawCaps: caps, at: time)
                                 },
                                 log: log)
        self.loop = loop
        let events = self.events
        loop.onFirstFrame = { events.publish("firstFrame") }
        loop.renderTimer = metrics.renderTime
        loop.dropPattern = options.injectDrops
        let rtsp = self.rtsp
        loop.viewers = { rtsp?.viewers ?? 0 }
        let live = try makeEncoder(fixed: nil, rawCaps: loop.rawCaps)
        live.onNewSize = { [weak self] size in self?.encodedNewSize(size) }
        lock.withLock { liveEncoder = live }
        if let rtsp {
            rtsp.source = live
            rtsp.frameClockBase = { [weak loop] in loop?.clock.baseTime }
            live.subscribe(rtsp) { [weak rtsp] b, c in rtsp?.deliver(b, c) }
        }
        do {
            for out in pipelineOutputs {
                if case .record(_, let format, _) = out.spec, format.fixedSize { out.fileSize = renderer.size }
                out.feed(from: live)
                try out.startOrRetry()
            }
        } catch {
            for out in pipelineOutputs { out.finish(timeout: 2) }
            live.finish(timeout: 2)
            rtsp?.stop()
            throw error
        }
        // Draw one frame before the clock starts: fonts, glyph caches and artwork are loaded now, not on the
        // first live frame, which would otherwise be late.
        _ = try? renderer.snapshot(at: FrameTime(frame: 0, media: 0, wall: Date()))
        renderer.invalidate()
        loop.start()
        watchDrops()
    }

    private func allEncoders() -> [Encoder] {
        lock.withLock { [liveEncoder].compactMap { $0 } + Array(fixedEncoders.values) }
    }

    public func requestResize(_ size: PixelSize) {
        lock.withLock { resizeRequested[size] = Date() }
        loop?.requestResize(size)
    }

    /// When each pending resize was asked for, to time it to the first encoded frame of the new size.
    private var resizeRequested: [PixelSize: Date] = [:]

    /// The live encoder produced its first frame of `size`: report how long that took from the request.
    private func encodedNewSize(_ size: PixelSize) {
        guard let asked = lock.withLock({ resizeRequested.removeValue(forKey: size) }) else { return }
        let ms = Date().timeIntervalSince(asked) * 1000
        events.publish("resizeEncoded", ["width": String(size.width), "height": String(size.height),
                                         "latencyMs": String(format: "%.1f", ms)])
    }

    /// On the loop thread, before the first frame of `size`, stamped `time`: fixed-size files switch to an
    /// encoder of their own size (fit) or end and start a new numbered file (split), at that frame exactly.
    private func willResize(to size: PixelSize, rawCaps: String, at time: MediaTime) {
        guard let live = lock.withLock({ liveEncoder }) else { return }
        // The live encoder starts over at the new size: its frame at `time` is a key frame.
        live.requestKeyFrame(at: time)
        var stillUsed = Set<PixelSize>()
        for out in lock.withLock({ pipelineOutputs }) where (out.state == .running || out.state == .starting) && !out.isEnding {
            guard case .record(let path, let format, let policy) = out.spec, format.fixedSize,
                  let fileSize = out.fileSize else { continue }
            switch policy {
            case .fit:
                let target: Encoder
                if fileSize == size {
                    target = live
                } else if let e = lock.withLock({ fixedEncoders[fileSize] }) {
                    target = e
                    stillUsed.insert(fileSize)
                } else {
                    do {
                        let e = try makeEncoder(fixed: fileSize, rawCaps: rawCaps)
                        // Once stopped and drained, outputs waiting for its last frame move on at once.
                        e.onDrained = { [weak self, weak e] in
                            guard let self, let e else { return }
                            for out in self.lock.withLock({ self.pipelineOutputs }) { out.sourceEnded(e) }
                        }
                        lock.withLock { fixedEncoders[fileSize] = e }
                        target = e
                        stillUsed.insert(fileSize)
                    } catch {
                        log("\(out.id): cannot letterbox into \(fileSize): \(error); the file ends here")
                        out.end(at: time)
                        continue
                    }
                }
                if out.source !== target {
                    target.requestKeyFrame(at: time)
                    out.switchSource(to: target, at: time)
                }
            case .split:
                out.end(at: time)
                let n = lock.withLock { () -> Int in
                    splitCounters[path, default: 1] += 1
                    return splitCounters[path]!
                }
                let url = URL(fileURLWithPath: path)
                let next = url.deletingPathExtension().path + "-\(n)." + url.pathExtension
                do {
                    let fresh = try makePipelineOutput(out.spec, index: 0, path: next)
                    fresh.fileSize = size
                    fresh.feed(from: live, startingAt: time)
                    try fresh.start()
                    lock.withLock { pipelineOutputs.append(fresh) }
                    log("\(out.id): size is now \(size); continuing in \(next)")
                } catch {
                    log("\(out.id): cannot start \(next): \(error)")
                }
            }
        }
        // Encoders nobody listens to any more are drained and stopped; outputs waiting for their last frames
        // then move on.
        let idle = lock.withLock { () -> [Encoder] in
            let gone = fixedEncoders.filter { !stillUsed.contains($0.key) }
            for k in gone.keys { fixedEncoders.removeValue(forKey: k) }
            return Array(gone.values)
        }
        for e in idle {
            DispatchQueue.global().async { [weak self] in
                e.finish(timeout: 2)
                guard let self else { return }
                self.lock.withLock { self.retiredEncoderDrops += e.droppedFrames + e.delayDropped }
                for out in self.lock.withLock({ self.pipelineOutputs }) { out.sourceEnded(e) }
            }
        }
        log("resized to \(size)")
        events.publish("resized", ["width": String(size.width), "height": String(size.height)])
    }

    /// Starts a recording or a push while running (`ctl record start FILE`), with willStart/didStart or
    /// failedToStart events. Returns the output's id.
    @discardableResult
    public func startOutput(_ spec: OutputSpec) throws(ControlError) -> String {
        guard let live = lock.withLock({ liveEncoder }) else { throw .conflict("not running") }
        if case .rtsp = spec { throw .bad("the RTSP server is configured at start (--rtsp)") }
        let out: PipelineOutput
        do {
            out = try makePipelineOutput(spec, index: lock.withLock { pipelineOutputs.count }, path: nil)
            _ = try out.prepare()
        } catch {
            throw .unprocessable("\(error)")
        }
        if lock.withLock({ pipelineOutputs.contains { $0.id == out.id && $0.state != .stopped } }) {
            throw .conflict("\(out.id) is already running")
        }
        events.publish("willStart", ["output": out.id])
        if case .record(_, let format, _) = spec, format.fixedSize { out.fileSize = renderer.size }
        out.feed(from: live)
        do {
            try out.startOrRetry()
        } catch {
            out.finish(timeout: 1)
            events.publish("failedToStart", ["output": out.id, "reason": "\(error)"])
            throw .unprocessable("cannot start \(out.id): \(error)")
        }
        lock.withLock { pipelineOutputs.append(out) }
        events.publish("didStart", ["output": out.id])
        return out.id
    }

    /// Ends one output (its file is finalized) while the rest run on.
    public func stopOutput(id: String) throws(ControlError) {
        guard let out = lock.withLock({ pipelineOutputs.first { $0.id == id && $0.state != .stopped } }) else {
            let ids = lock.withLock { pipelineOutputs.filter { $0.state != .stopped }.map(\.id) }
            throw .notFound("no running output '\(id)'; running: \(ids.isEmpty ? "none" : ids.joined(separator: ", "))")
        }
        events.publish("willStop", ["output": id])
        let ok = out.finish()
        events.publish("didStop", ["output": id, "finalized": ok ? "true" : "false"])
    }

    /// Blocks until the frame loop ends by itself (`duration`).
    public func waitUntilFinished() { loop?.waitUntilFinished() }

    /// Stops the frame loop, drains the encoders, finalizes every output. Returns false if some output did
    /// not finish in time.
    @discardableResult
    public func stop() -> Bool {
        lock.withLock { dropWatch?.cancel(); dropWatch = nil }
        loop?.stop()
        var ok = true
        let encoders = allEncoders()
        for e in encoders { ok = e.finish() && ok }
        lock.withLock {
            finalEncoded = liveEncoder?.encodedFrames ?? finalEncoded
            finalDelayHeld = liveEncoder?.delayHeld ?? finalDelayHeld
            retiredEncoderDrops += encoders.reduce(0) { $0 + $1.droppedFrames + $1.delayDropped }
        }
        let outs = lock.withLock { pipelineOutputs }
        // Every encoder is drained: frames an output held for a switch that will not complete go out now.
        for out in outs { for e in encoders { out.sourceEnded(e) } }
        for out in outs {
            // Files must be finalized; a push only says goodbye to its server, which may be slow or gone.
            if case .push = out.spec {
                if !out.finish(timeout: 3) { log("\(out.id): the server did not acknowledge the end of stream") }
            } else {
                ok = out.finish() && ok
            }
        }
        rtsp?.stop()
        lock.withLock {
            liveEncoder = nil
            fixedEncoders = [:]
        }
        return ok
    }

    /// Numbers for status lines and the end-of-run summary.
    public struct Status: Sendable {
        public var size: PixelSize
        public var frame: Int64
        public var rendered: UInt64
        public var repeated: UInt64
        public var late: UInt64
        public var encoderDropped: UInt64
        public var encoded: UInt64
        public var outputs: [(id: String, state: String, delivered: UInt64, dropped: UInt64, bytes: UInt64)]
        public var viewers: Int
        public var uptime: Double
        /// Restarts of outputs that retry (pushes), by id.
        public var restarts: [(String, Int)] = []
        /// Frames left out on purpose (`--inject-drops`); not in `dropped`.
        public var injected: UInt64 = 0
        /// How long the live encoder's frames were really held by `--inject-delay-ms`.
        public var delayHeld: LatencySummary?

        /// Frames lost anywhere: late in the loop, dropped before the encoder, or by an output's queue.
        public var dropped: UInt64 { late + encoderDropped + outputs.reduce(0) { $0 + $1.dropped } }
    }

    public var status: Status {
        let s = loop?.stats ?? FrameLoop.Stats()
        let encs = allEncoders()
        var outs: [(id: String, state: String, delivered: UInt64, dropped: UInt64, bytes: UInt64)] = []
        if let rtsp { outs.append((rtsp.id, "serving \(rtsp.url)", rtsp.delivered, rtsp.dropped, rtsp.bytes)) }
        for c in lock.withLock({ pipelineOutputs }) { outs.append((c.id, c.state.rawValue, c.delivered, c.dropped, c.bytes)) }
        var status = Status(size: s.size, frame: s.frame, rendered: s.rendered, repeated: s.repeated, late: s.late,
                      encoderDropped: encs.reduce(0) { $0 + $1.droppedFrames + $1.delayDropped } + lock.withLock { retiredEncoderDrops },
                      encoded: lock.withLock { liveEncoder?.encodedFrames ?? finalEncoded },
                      outputs: outs, viewers: rtsp?.viewers ?? 0, uptime: Date().timeIntervalSince(started))
        status.restarts = lock.withLock { pipelineOutputs.map { ($0.id, $0.restarts) } }
        status.injected = s.injected
        status.delayHeld = lock.withLock { liveEncoder?.delayHeld ?? finalDelayHeld }
        return status
    }

    /// Checks once a second for new drops and reports them as one event (never more than one a second).
    private func watchDrops() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "drop-watch"))
        var reported: UInt64 = 0
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let dropped = self.status.dropped
            if dropped > reported {
                self.events.publish("framesDropped", ["new": String(dropped - reported), "total": String(dropped)])
                reported = dropped
            }
        }
        timer.resume()
        lock.withLock { dropWatch = timer }
    }

    /// Frames waiting before the live encoder now.
    public var encoderQueue: Int { lock.withLock { liveEncoder?.input.queued ?? 0 } }

    public let metrics = LiveMetrics()
}
