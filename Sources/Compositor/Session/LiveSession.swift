import Foundation

/// A running pipcompose: the renderer and frame loop, the encoders and outputs of a `Topology`, the servers that
/// serve viewers, the inputs the scene takes in. This file is the assembly and the lifecycle: what `prepare()`
/// checks, the steps of `start()` in their order, and `stop()`. How each part is made lives beside it
/// (`+Outputs`: outputs and servers; `+Topology`: changes of what runs; `+Follow`: renditions for browser windows;
/// `+Web`, `+Control`, `+Status`).
///
/// Start-up checks everything that can be checked before the first frame (pipelines parse, encoders exist,
/// files open, the RTSP port is free). At run time each output fails alone. What runs changes only on the
/// topology queue (`owner`): a resize, an output started or stopped. The frame loop reads the running graph
/// the owner published last. `stop()` drains every encoder and finalizes every file before returning.
///
/// `@unchecked Sendable`: `plan`, `servers`' members and `loop` are set by `prepare()`/`start()` before any other
/// thread sees the session; the graph is in `running` (a `Latest`); `inputs`, `tally`, `resizes` and `watch` lock
/// themselves.
public final class LiveSession: @unchecked Sendable {
    public let options: LiveOptions
    public let renderer: Renderer
    public let playback: Playback
    public let events: EventBus
    public let metrics = LiveMetrics()
    public let log: @Sendable (String) -> Void
    /// The encoders' pipelines, what the sound needs and the outputs named on the command line, found by `prepare()`.
    var plan = EncodingPlan()
    /// What serves viewers (RTSP and its renditions' paths, WebRTC, the HLS ladder's playlist, renditions made for
    /// browsers' windows), made by `prepare()`.
    let servers = ServerSet()
    /// Music and the sound track, video layers' sources, web pages: from `start()` until `stop()`.
    let inputs = InputSet()
    private(set) var loop: FrameLoop?
    /// The one owner of what runs: every change to the topology is made on this queue, one at a time.
    let owner = DispatchQueue(label: "pipcompose.topology")
    /// What runs now, published whole by `owner`; nil before start and after stop.
    let running = Latest<RunningGraph?>(nil)
    /// When it began, what ended: outputs that ran, encoders' drops, the live encoder's last figures.
    let tally = RunTally()
    /// Resizes asked for and not yet applied: when, and the encoders made ahead for them.
    let resizes = PendingResizes()
    /// New drops reported, web pages told, once a second.
    private let watch = RepeatingJob(label: "drop-watch", every: 1)
    /// Every 10 s, the free pages left between live blocks in the allocator's heaps go back to the system (see
    /// `Gst.giveBackFreeMemory`).
    private let giveBack = RepeatingJob(label: "memory-give-back", every: 10)

    public init(options: LiveOptions, log: @escaping @Sendable (String) -> Void) {
        var options = options
        // Browsers decode constrained baseline (x264's ultrafast is that already; a slower preset would give High),
        // those behind an RTP receiver such as Janus too.
        if options.webrtc != nil || options.rtpPushes.count > 0 { options.encoder.constrainedBaseline = true }
        self.options = options
        self.log = log
        events = EventBus(log: log)
        var scene = options.scene
        scene.fps = options.fps
        renderer = Renderer(scene: scene, size: options.size, warn: { log("warning: \($0)") })
        playback = Playback(timeline: scene.timeline, fps: scene.fps)
    }

    /// The audio track, from `start()` until `stop()` (nil with `--audio none`).
    public var audio: AudioTrack? { inputs.sound }

    /// The ids of the outputs that run now (recordings, pushes, pipelines; not the servers).
    public var outputIDs: [String] {
        if let g = running.value { return g.topology.outputs.map(\.id) }
        return plan.outputs.map(\.id)
    }

    /// The RTSP server's main address (the main picture's path), when the run serves RTSP.
    public var rtspURL: String? { servers.all.lazy.compactMap { $0 as? RTSPOutput }.first { $0.rendition == nil }?.url }

    /// Builds every pipeline's text and checks what can be checked without starting. Returns the text of
    /// each pipeline by name, which is what `--dump-pipeline` prints.
    @discardableResult
    public func prepare() throws -> [(String, String)] {
        Gst.initialize()
        var dump: [(String, String)] = []
        plan = try EncodingPlan.make(options, dump: &dump, warn: { [log] in log("warning: \($0)") })
        plan.outputs = try makeOutputs(dump: &dump)
        try makeLadder(adding: &plan.outputs, dump: &dump)
        try makeWebRTC(dump: &dump)
        return dump
    }

    /// Starts serving, recording and pushing, then the frame loop. A step that fails takes down what the steps
    /// before it started, and is thrown.
    public func start() throws {
        if plan.encoder == nil { try prepare() }
        var rollback = Rollback()
        let loop: FrameLoop
        do {
            try servers.open()
            rollback.add { [servers] in servers.close(timeout: 2) }
            loop = try makeFrameLoop()
            try startSound(on: loop)
            rollback.add { [inputs] in
                inputs.sound?.finish(at: 0, timeout: 2)
                inputs.stop()
            }
            let (live, renditions) = try makeEncoders(for: loop)
            rollback.add { for e in [live] + Array(renditions.values) { e.finish(timeout: 2) } }
            servers.serve(from: ServingSources(main: live, renditions: renditions,
                                               frameClockBase: { [weak loop] in loop?.clock.baseTime }))
            followBrowserWindows()
            try openOutputs(live: live, renditions: renditions)
        } catch {
            rollback.run()
            throw error
        }
        startInputs()
        warmUp()
        loop.start()
        servers.startWriting(log: log)
        watchDrops()
        giveBack.start { Gst.giveBackFreeMemory() }
    }

    /// The frame loop, not yet ticking: it draws while someone takes the main picture or a rendition.
    private func makeFrameLoop() throws -> FrameLoop {
        let running = self.running, servers = self.servers
        let loop = try FrameLoop(renderer: renderer, fps: options.fps, duration: options.duration, playback: playback,
                                 encoders: { running.value?.encoders ?? [] },
                                 willResize: { [weak self] size, caps, time in
                                     self?.willResize(to: size, rawCaps: caps, at: time)
                                 },
                                 log: log)
        self.loop = loop
        let events = self.events
        loop.onFirstFrame = { events.publish(.firstFrame) }
        loop.renderTimer = metrics.renderTime
        loop.dropPattern = options.injectDrops
        loop.viewers = { servers.viewerCount }
        // What nobody takes costs nothing: the main picture is drawn and encoded while an output carries it, or a
        // server's viewer watches it (or has just asked for it).
        loop.mainWanted = {
            if servers.wantsMain { return true }
            guard let g = running.value else { return true }
            return g.topology.outputs.contains { $0.rendition == nil }
        }
        return loop
    }

    /// The sound (`--audio`): the music heard (a file, a playlist) and the audio track, drawn on the frame clock,
    /// that every output and server hears.
    private func startSound(on loop: FrameLoop) throws {
        guard !plan.audio.isEmpty else { return }
        var music: MusicPlayer?
        if let source = plan.music {
            let card = MusicCard(session: self, files: source.files, log: log)
            let player = MusicPlayer(files: source.files, template: source.template, warn: { [log] in log("warning: \($0)") },
                                     onTrack: { [weak card] in card?.trackStarted($0) })
            inputs.start([MusicInput(player: player, card: card)])
            music = player
        }
        let track: AudioTrack
        do {
            track = try AudioTrack(choice: options.audio, offsetMilliseconds: options.injectAVOffsetMs,
                                   templates: plan.audio, music: music, warn: { [log] in log("warning: \($0)") },
                                   onError: { [log] e in log("audio: \(e)") })
        } catch {
            inputs.stop()
            throw error
        }
        track.delay(by: options.injectDelayMs)
        inputs.sound = track
        loop.afterFrame = { [weak track] time in track?.advance(to: time) }
        for out in servers.all + plan.outputs as [any Output] { out.hear(track) }
    }

    /// The live encoder (it follows the render size) and one per rendition.
    private func makeEncoders(for loop: FrameLoop) throws -> (live: Encoder, renditions: [PixelSize: Encoder]) {
        let live = try makeEncoder(fixed: nil, liveSize: renderer.size, rawCaps: loop.rawCaps)
        live.onNewSize = { [weak self] size in self?.encodedNewSize(size) }
        do {
            return (live, try makeRenditions(loop))
        } catch {
            live.finish(timeout: 2)
            throw error
        }
    }

    /// The recordings, pushes and pipelines asked for at start: into the topology, fed, opened; then the running
    /// graph is published. One that cannot open ends them all and is thrown.
    private func openOutputs(live: Encoder, renditions: [PixelSize: Encoder]) throws {
        try owner.sync {
            var topology = Topology(size: renderer.size)
            var outputs: [String: any PlacedOutput] = [:]
            do {
                for out in plan.outputs {
                    topology = try topology.adding(Topology.Output(id: out.id, spec: out.spec, location: out.location,
                                                                   rendition: out.rendition))
                    outputs[out.id] = out
                    out.feed(from: out.rendition.flatMap { renditions[$0] } ?? live)
                    try out.open()
                }
            } catch {
                for out in plan.outputs { _ = out.finish(timeout: 2) }
                throw error
            }
            tally.started(plan.outputs)
            running.value = RunningGraph(topology: topology, live: live, renditions: renditions, outputs: outputs,
                                         servers: servers)
        }
    }

    /// The inputs of the scene's video layers and web pages, each failing and retrying alone.
    private func startInputs() {
        let events = self.events, log = self.log
        // The renderer's scene: the run's frame rate (--fps), which pages take as theirs unless they say.
        let context = InputContext(scene: renderer.scene, picture: renderer.size, web: options.web,
                                   pageState: { [weak self] size in self?.pageState(size) ?? "{}" },
                                   onEvent: { events.publish($0) }, warn: { log("warning: \($0)") })
        inputs.start(WidgetFactory.liveInputs(of: renderer, context: context))
    }

    /// Draws one frame before the clock starts: fonts, glyph caches and artwork are loaded now, not on the first
    /// live frame, which would otherwise be late.
    private func warmUp() {
        _ = try? renderer.snapshot(at: FrameTime(frame: 0, media: 0, wall: Date()))
        renderer.invalidate()
    }

    public func requestResize(_ size: PixelSize) {
        resizes.asked(size)
        prepareResize(to: size)
        loop?.requestResize(size)
        inputs.willResize(to: size, scene: options.scene)
    }

    /// The live encoder produced its first frame of `size`: report how long that took from the request.
    private func encodedNewSize(_ size: PixelSize) {
        guard let asked = resizes.encoded(size) else { return }
        let ms = Date().timeIntervalSince(asked) * 1000
        events.publish(.resizeEncoded(size, latencyMs: ms))
    }

    /// Blocks until the frame loop ends by itself (`duration`).
    public func waitUntilFinished() { loop?.waitUntilFinished() }

    /// Stops the frame loop, drains the encoders, finalizes every output. Returns false if some output did
    /// not finish in time (one that failed, even while finishing, was closed with its message and does not count);
    /// `unfinishedOutputs` names them.
    @discardableResult
    public func stop() -> Bool {
        watch.stop()
        giveBack.stop()
        loop?.stop()
        // No change of topology after this point: the owner's queue is drained and the graph taken down.
        guard let graph = owner.sync(execute: { () -> RunningGraph? in
            defer { running.value = nil }
            return running.value
        }) else {
            servers.finish(timeout: 2)
            return true
        }
        var ok = true
        let encoders = graph.allEncoders
        // The sound ends where the last frame ends: both tracks within one frame of each other.
        if let audio = inputs.sound, let loop {
            let end = loop.clock.time(ofFrame: loop.stats.frame + 1)
            ok = audio.finish(at: end) && ok
        }
        inputs.stop()
        for e in encoders { ok = e.finish() && ok }
        // Renditions made for browsers' windows: nobody records them, drained for the count.
        for e in servers.windows?.encoders.values.map({ $0 }) ?? [] { _ = e.finish(timeout: 2) }
        discardReadyEncoders()
        tally.ended(live: graph.live, encoders: encoders)
        let outs = tally.ran
        // Every encoder is drained: frames an output held for a switch that will not complete go out now.
        for out in outs { for e in encoders { out.sourceEnded(e) } }
        // Every output as one set: those that ran (split parts and stopped ones too, already ended), side by side so
        // that one stuck in a write holds up none of the others (each is bounded: its end, then its stop); then the
        // servers and writers the graph holds.
        let ended = Self.finishSideBySide(outs)
        tally.unfinished(zip(outs, ended).filter { !$0.1 }.map { $0.0.id })
        for out in graph.servers.outputs { ok = out.finishAsRunEnds() && ok }
        return ok && !ended.contains(false)
    }

    /// Finishes every one of `outputs` at once, each on a thread of its own; whether each finished, in their order.
    private static func finishSideBySide(_ outputs: [any PlacedOutput]) -> [Bool] {
        // Threads, not a concurrent queue: that has as many workers as cores, and two stuck outputs would hold both.
        let finished = Latest([Bool](repeating: false, count: outputs.count))
        let lock = NSLock(), all = DispatchGroup()
        for (i, out) in outputs.enumerated() {
            all.enter()
            let thread = Thread {
                let ok = out.finishAsRunEnds()
                lock.withLock { finished.value[i] = ok }
                all.leave()
            }
            thread.name = "finish:\(i)"
            thread.start()
        }
        all.wait()
        return finished.value
    }

    /// Checks once a second for new drops and reports them as one event (never more than one a second); tells web
    /// pages what changed.
    private func watchDrops() {
        let reported = Latest<UInt64>(0)
        watch.start { [weak self] in
            guard let self else { return }
            let dropped = self.status.dropped
            if dropped > reported.value {
                self.events.publish(.framesDropped(new: dropped - reported.value, total: dropped))
                reported.value = dropped
            }
            self.tellPages()
        }
    }

    /// The outputs whose end did not come out in time when the run ended, or that were stuck and left behind.
    public var unfinishedOutputs: [String] { tally.snapshot.unfinished }

    /// Frames waiting before the live encoder now.
    public var encoderQueue: Int { running.value?.live.input.queued ?? 0 }
}

/// What to take down, last first, when a later step of a start fails.
struct Rollback {
    private var steps: [() -> Void] = []
    mutating func add(_ step: @escaping () -> Void) { steps.append(step) }
    func run() { for step in steps.reversed() { step() } }
}
