import Foundation

/// A running pipcompose: the renderer and frame loop, the encoders and outputs of a `Topology`, the RTSP server.
///
/// Start-up checks everything that can be checked before the first frame (pipelines parse, encoders exist,
/// files open, the RTSP port is free). At run time each output fails alone. What runs changes only on the
/// topology queue (`owner`): a resize, an output started or stopped. The frame loop reads the running graph
/// the owner published last. `stop()` drains every encoder and finalizes every file before returning.
///
/// `@unchecked Sendable`: `encoderKind`, `encoderTemplate`, `rtsp`, `loop` and `prepared` are set by
/// `prepare()`/`start()` before any other thread sees the session; the graph is in `running` (a `Latest`);
/// the counters below are behind `lock`, which is only held to copy them.
public final class LiveSession: @unchecked Sendable {
    public let options: LiveOptions
    public let renderer: Renderer
    public let playback: Playback
    public let events: EventBus
    public let metrics = LiveMetrics()
    public let log: @Sendable (String) -> Void
    let lock = NSLock()
    var encoderKind = EncoderSettings.Kind.x264
    private var encoderTemplate: PipelineTemplate?
    /// One encoder pipeline per codec the sound is encoded to (AAC always; Opus for MKV when asked).
    var audioTemplates: [AudioCodec: PipelineTemplate] = [:]
    /// The audio track, from `start()` until `stop()` (nil with `--audio none`).
    public private(set) var audio: AudioTrack?
    /// The files `--audio FILE` plays, discovered by `prepare()`, and the template that decodes them.
    private var musicFiles: [AudioFile] = []
    private var musicTemplate: PipelineTemplate?
    /// The music of `--audio FILE`, from `start()` until `stop()`; the card follows it.
    public private(set) var music: MusicPlayer?
    var musicCard: MusicCard?
    /// The inputs of the scene's video layers, from `start()` until `stop()`.
    public private(set) var videoInputs: [VideoInput] = []
    /// Web widgets' pages and the server they load from, from `start()` until `stop()`; behind `lock`.
    var pageSet: PageSet?
    /// The now-playing card as `window.pipcompose` tells pages, read on the render thread; behind `lock`.
    var nowPlayingForPages: NowPlayingConfig?
    /// The outputs named on the command line, prepared, until `start()` puts them in the topology.
    private var prepared: [PipelineOutput] = []
    public private(set) var rtsp: RTSPOutput?
    /// The RTSP server's path for each rendition (`/pip@416x234`), from `prepare()`.
    public private(set) var renditionRTSP: [PixelSize: RTSPOutput] = [:]
    /// The HLS ladder's master playlist (`--hls`), from `prepare()`.
    var hlsMaster: HLSMaster?
    /// WHEP viewers (`--webrtc`), from `prepare()`.
    public private(set) var webrtc: WebRTCOutput?
    /// Renditions made for browsers following their windows (`--webrtc`), from `prepare()`.
    var browserRenditions: BrowserRenditions?
    /// The outputs that serve viewers (RTSP, WebRTC): open before any file, ended after every file.
    var servers: [any Output] {
        // The renditions' paths end before the main one, whose output stops the server.
        renditionRTSP.keys.sorted { ($0.width, $0.height) < ($1.width, $1.height) }.compactMap { renditionRTSP[$0] }
            + [rtsp as (any Output)?, webrtc].compactMap { $0 }
    }
    private(set) var loop: FrameLoop?
    /// The one owner of what runs: every change to the topology is made on this queue, one at a time.
    let owner = DispatchQueue(label: "pipcompose.topology")
    /// What runs now, published whole by `owner`; nil before start and after stop.
    let running = Latest<RunningGraph?>(nil)
    /// Every output that ran, in the order they started (those that ended too): status and the summary.
    var ran: [PipelineOutput] = []
    private var dropWatch: DispatchSourceTimer?
    /// Frames the live encoder produced, kept after it is gone for the end-of-run summary.
    var finalEncoded: UInt64 = 0
    var finalDelayHeld: LatencySummary?
    /// Frames dropped at encoders that have stopped (fixed encoders after a resize back, all at the end).
    var retiredEncoderDrops: UInt64 = 0
    /// When each pending resize was asked for, to time it to the first encoded frame of the new size.
    private var resizeRequested: [PixelSize: Date] = [:]
    let started = Date()

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
        playback = Playback(timeline: scene.timeline)
    }

    /// The ids of the outputs that run now (recordings, pushes, pipelines; not the RTSP server).
    public var outputIDs: [String] {
        if let g = running.value { return g.topology.outputs.map(\.id) }
        return prepared.map(\.id)
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
        if !options.audio.isSilent {
            // AAC for files, pushes and RTSP; Opus too for MKV when asked and for browsers (WebRTC, RTP pushes).
            var codecs: Set<AudioCodec> = [.aac, options.mkvAudioCodec]
            if options.webrtc != nil || options.rtpPushes.contains(where: { $0.audioPort != nil }) { codecs.insert(.opus) }
            for codec in codecs.sorted(by: { $0.rawValue < $1.rawValue }) {
                let t = try PipelineTemplate.load(codec.templateName)
                audioTemplates[codec] = t
                dump.append(("audio-\(codec)", try t.render(["bitrate": "128000"])))
            }
        }
        if case .music(let source) = options.audio {
            musicFiles = try Playlist.load(source, warn: { [log] in log("warning: \($0)") })
            let t = try PipelineTemplate.load("decode-audio")
            musicTemplate = t
            dump.append(("music", try t.render(["uri": "\"\(PipelineTemplate.quoted(musicFiles[0].uri))\""])))
        }
        var outputs: [PipelineOutput] = []
        for (i, spec) in options.outputs.enumerated() {
            switch spec {
            case .rtsp(let endpoint):
                guard rtsp == nil else { throw OutputSpec.Invalid(description: "only one --rtsp endpoint per process") }
                let out = try makeRTSPOutput(endpoint)
                rtsp = out
                dump.append(("rtsp \(endpoint.url)", out.mediaLaunch))
                // Each rendition at its own path of the same server.
                for r in options.renditions {
                    renditionRTSP[r.size] = try RTSPOutput(rendition: r.size, of: out, template: try PipelineTemplate.load("rtsp-media"))
                }
            default:
                let out = try makePipelineOutput(spec, index: i, location: nil, rendition: options.outputRenditions[i])
                guard !outputs.contains(where: { $0.id == out.id }) else {
                    throw OutputSpec.Invalid(description: "\(out.id) is given twice")
                }
                if let clash = outputs.first(where: { spec.sharesRTPPort(with: $0.spec) }) {
                    throw OutputSpec.Invalid(description: "\(out.id) sends to a port \(clash.id) sends to too; its "
                                             + "receiver would mix the two streams: give each push its own ports")
                }
                dump.append((out.id, try out.prepare()))
                outputs.append(out)
            }
        }
        if let hls = options.hls {
            // One rung per picture: the main one, then each rendition from the largest down.
            let sizes: [PixelSize?] = [nil] + options.renditions.map(\.size).sorted { $0.width * $0.height > $1.width * $1.height }
            var rungs: [HLSMaster.Rung] = []
            for size in sizes {
                let name = HLSSettings.rung(size)
                try FileManager.default.createDirectory(atPath: hls.folder + "/" + name, withIntermediateDirectories: true)
                let out = try makePipelineOutput(.hls(folder: hls.folder, rung: name), index: outputs.count, location: nil,
                                                 rendition: size)
                dump.append((out.id, try out.prepare()))
                outputs.append(out)
                let kbps = size.map { s in options.encoder.bitrate(forRendition: options.renditions.first { $0.size == s }!,
                                                                  fps: options.fps) }
                    ?? options.encoder.bitrate(for: options.size, fps: options.fps)
                rungs.append(HLSMaster.Rung(name: name, output: out, size: size ?? options.size, kbps: kbps))
            }
            hlsMaster = HLSMaster(folder: hls.folder, rungs: rungs, fps: options.fps,
                                  audioKbps: options.audio.isSilent ? nil : 128, log: log)
        }
        if let settings = options.webrtc {
            let fan = try PipelineTemplate.load("webrtc"), viewer = try PipelineTemplate.load("webrtc-viewer")
            // VP8 for browsers without H.264, when vp8enc and avdec_h264 are installed.
            var vp8: (branch: PipelineTemplate, viewer: PipelineTemplate, values: [String: String])?
            if Gst.hasElement("vp8enc") && Gst.hasElement("avdec_h264") {
                let values = ["bitrate_bps": String(options.encoder.bitrate(for: options.size, fps: options.fps) * 1000),
                              "keyint": String(options.encoder.keyInterval > 0 ? options.encoder.keyInterval : options.fps * 2)]
                vp8 = (try PipelineTemplate.load("webrtc-vp8"), try PipelineTemplate.load("webrtc-viewer-vp8"), values)
            } else {
                log("warning: vp8enc or avdec_h264 is missing: WebRTC viewers without H.264 will be refused")
            }
            let events = self.events
            webrtc = try WebRTCOutput(template: fan, viewerTemplate: viewer, vp8: vp8, audio: !options.audio.isSilent,
                                      addresses: settings.addresses,
                                      maxViewers: settings.maxViewers, connectTimeout: settings.connectTimeout,
                                      frameClockBase: { [weak self] in self?.loop?.clock.baseTime },
                                      onEvent: { events.publish($0) })
            browserRenditions = BrowserRenditions(limit: settings.maxRenditions)
            dump.append(("webrtc", try WebRTCOutput.launch(template: fan, vp8: vp8, audio: !options.audio.isSilent)))
            dump.append(("webrtc viewer", try viewer.render(["pt": "PT"])))
            if let vp8 { dump.append(("webrtc viewer (VP8)", try vp8.viewer.render(["pt": "PT"]))) }
        }
        prepared = outputs
        return dump
    }

    /// An encoder for frames of `liveSize` (what the render size is, or becomes at a resize), letterboxed into
    /// `fixed` when given; `settings` other than the run's for a rendition's own bitrate.
    func makeEncoder(fixed: PixelSize?, liveSize: PixelSize, rawCaps: String, settings: EncoderSettings? = nil) throws -> Encoder {
        let e = try Encoder(template: encoderTemplate!, settings: settings ?? options.encoder, kind: encoderKind,
                            liveSize: liveSize, fixedSize: fixed, fps: options.fps, rawCaps: rawCaps,
                            onError: { [log] e in log("encoder \(fixed.map { "\($0)" } ?? "live"): \(e)") })
        e.delay(by: options.injectDelayMs, fps: options.fps)
        return e
    }

    /// Each rendition's picture, handed to the frame loop, and its encoder, at its own bitrate (the size's default
    /// without one).
    private func makeRenditions(_ loop: FrameLoop) throws -> [PixelSize: Encoder] {
        var encoders: [PixelSize: Encoder] = [:]
        var pictures: [RenditionPicture] = []
        var scene = options.scene
        scene.fps = options.fps
        do {
            for r in options.renditions {
                let picture = try RenditionPicture(scene: scene, size: r.size, fps: options.fps, warn: { _ in })
                picture.share(renderer)
                // Drawn once now, as the main picture is: its first live frame, when a viewer asks, is not late.
                picture.warmUp()
                var settings = options.encoder
                // Its own bitrate, or its size's default (not the main picture's --bitrate).
                settings.bitrate = r.bitrateKbps ?? 0
                encoders[r.size] = try makeEncoder(fixed: nil, liveSize: r.size, rawCaps: picture.caps, settings: settings)
                pictures.append(picture)
            }
        } catch {
            for e in encoders.values { e.finish(timeout: 2) }
            throw error
        }
        loop.renditions = pictures
        let running = self.running
        // Drawn while an output carries it or a viewer asked for its RTSP path.
        let served = renditionRTSP
        let webrtc = self.webrtc, browser = browserRenditions
        loop.renditionEncoders = {
            guard let graph = running.value else { return [:] }
            var wanted = graph.watched
            for (size, out) in served where out.isWanted { wanted[size] = graph.renditions[size] }
            // And those browsers see, or wait for a key frame of.
            if let webrtc {
                for size in webrtc.watchedRenditions { wanted[size] = graph.renditions[size] ?? browser?.encoders[size] }
            }
            return wanted
        }
        return encoders
    }

    /// Starts serving, recording and pushing, then the frame loop.
    public func start() throws {
        if encoderTemplate == nil { try prepare() }
        // The servers first: a port in use stops us before any file is created.
        for server in servers { try server.open() }
        let running = self.running
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
        let rtsp = self.rtsp, webrtc = self.webrtc
        loop.viewers = { (rtsp?.viewers ?? 0) + (webrtc?.viewerCount ?? 0) }
        // What nobody takes costs nothing: the main picture is drawn and encoded while an output carries it, an RTSP
        // viewer plays it (or has just asked for it), or a browser watches.
        let graph = self.running
        loop.mainWanted = {
            if rtsp?.isWanted == true || webrtc?.watchesMain == true { return true }
            guard let g = graph.value else { return true }
            return g.topology.outputs.contains { $0.rendition == nil }
        }
        if !audioTemplates.isEmpty {
            if let musicTemplate {
                let card = MusicCard(session: self, files: musicFiles, log: log)
                let player = MusicPlayer(files: musicFiles, template: musicTemplate, warn: { [log] in log("warning: \($0)") },
                                         onTrack: { [weak card] in card?.trackStarted($0) })
                musicCard = card
                music = player
                player.start()
            }
            let track: AudioTrack
            do {
                track = try AudioTrack(choice: options.audio, offsetMilliseconds: options.injectAVOffsetMs,
                                       templates: audioTemplates, music: music, warn: { [log] in log("warning: \($0)") },
                                       onError: { [log] e in log("audio: \(e)") })
            } catch {
                stopMusic()
                throw error
            }
            track.delay(by: options.injectDelayMs)
            audio = track
            loop.afterFrame = { [weak track] time in track?.advance(to: time) }
            for out in servers + prepared as [any Output] { out.hear(track) }
        }
        let live = try makeEncoder(fixed: nil, liveSize: renderer.size, rawCaps: loop.rawCaps)
        live.onNewSize = { [weak self] size in self?.encodedNewSize(size) }
        let renditions = try makeRenditions(loop)
        for out in [rtsp].compactMap({ $0 }) + Array(renditionRTSP.values) {
            out.frameClockBase = { [weak loop] in loop?.clock.baseTime }
        }
        for server in [rtsp as (any Output)?, webrtc].compactMap({ $0 }) { server.feed(from: live) }
        for (size, out) in renditionRTSP { if let e = renditions[size] { out.feed(from: e) } }
        // Browsers may see every rendition; more are made for their windows, and dropped when none sees them.
        for (size, e) in renditions { webrtc?.offer(size, from: e) }
        webrtc?.onPictureUnused = { [weak self] size in self?.dropBrowserRendition(size) }
        try owner.sync {
            var topology = Topology(size: renderer.size)
            var outputs: [String: PipelineOutput] = [:]
            do {
                for out in prepared {
                    topology = try topology.adding(Topology.Output(id: out.id, spec: out.spec, location: out.location,
                                                                   rendition: out.rendition))
                    outputs[out.id] = out
                    out.feed(from: out.rendition.flatMap { renditions[$0] } ?? live)
                    try out.open()
                }
            } catch {
                for out in prepared { out.finish(timeout: 2) }
                live.finish(timeout: 2)
                for e in renditions.values { e.finish(timeout: 2) }
                audio?.finish(at: 0, timeout: 2)
                stopMusic()
                for server in servers { _ = server.finish(timeout: 2) }
                throw error
            }
            lock.withLock { ran = prepared }
            running.value = RunningGraph(topology: topology, live: live, renditions: renditions, outputs: outputs)
        }
        startVideoInputs()
        startPages()
        // Draw one frame before the clock starts: fonts, glyph caches and artwork are loaded now, not on the
        // first live frame, which would otherwise be late.
        _ = try? renderer.snapshot(at: FrameTime(frame: 0, media: 0, wall: Date()))
        renderer.invalidate()
        loop.start()
        hlsMaster?.start()
        watchDrops()
    }

    public func requestResize(_ size: PixelSize) {
        lock.withLock { resizeRequested[size] = Date() }
        loop?.requestResize(size)
        // Web pages are told their coming size now, not at the frame that applies it: they re-lay meanwhile.
        let pages = self.pages
        guard !pages.isEmpty else { return }
        let sizes = WebWidget.pageSizes(of: options.scene, at: size)
        for page in pages { if let s = sizes[page.id] { page.frames.expect(s) } }
    }

    /// The live encoder produced its first frame of `size`: report how long that took from the request.
    private func encodedNewSize(_ size: PixelSize) {
        guard let asked = lock.withLock({ resizeRequested.removeValue(forKey: size) }) else { return }
        let ms = Date().timeIntervalSince(asked) * 1000
        events.publish(.resizeEncoded(size, latencyMs: ms))
    }

    /// Blocks until the frame loop ends by itself (`duration`).
    public func waitUntilFinished() { loop?.waitUntilFinished() }

    /// Stops the frame loop, drains the encoders, finalizes every output. Returns false if some output did
    /// not finish in time (one that failed, even while finishing, was closed with its message and does not count).
    @discardableResult
    public func stop() -> Bool {
        lock.withLock { dropWatch?.cancel(); dropWatch = nil }
        loop?.stop()
        // No change of topology after this point: the owner's queue is drained and the graph taken down.
        guard let graph = owner.sync(execute: { () -> RunningGraph? in
            defer { running.value = nil }
            return running.value
        }) else {
            for server in servers { _ = server.finish(timeout: 2) }
            hlsMaster?.stop()
            return true
        }
        var ok = true
        let encoders = graph.allEncoders
        // The sound ends where the last frame ends: both tracks within one frame of each other.
        if let audio, let loop {
            let end = loop.clock.time(ofFrame: loop.stats.frame + 1)
            ok = audio.finish(at: end) && ok
        }
        stopMusic()
        for input in videoInputs { input.stop() }
        stopPages()
        for e in encoders { ok = e.finish() && ok }
        // Renditions made for browsers' windows: nobody records them, drained for the count.
        for e in browserRenditions?.encoders.values.map({ $0 }) ?? [] { _ = e.finish(timeout: 2) }
        let outs = lock.withLock {
            finalEncoded = graph.live.encodedFrames
            finalDelayHeld = graph.live.delayHeld
            retiredEncoderDrops += encoders.reduce(0) { $0 + $1.droppedFrames + $1.delayDropped }
            return ran
        }
        // Every encoder is drained: frames an output held for a switch that will not complete go out now.
        for out in outs { for e in encoders { out.sourceEnded(e) } }
        for out in outs {
            // Files must be finalized; a push only says goodbye to its server, which may be slow or gone. An output
            // that fails now has said so and is closed at once: only one that runs out of time fails the run.
            if case .push = out.spec {
                if out.finish(timeout: 3) == .timedOut {
                    log("\(out.id): the server did not acknowledge the end of stream")
                }
            } else if out.finish() == .timedOut {
                ok = false
            }
        }
        for server in servers { _ = server.finish(timeout: 3) }
        hlsMaster?.stop()
        return ok
    }

    /// Checks once a second for new drops and reports them as one event (never more than one a second); tells web
    /// pages what changed.
    private func watchDrops() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "drop-watch"))
        var reported: UInt64 = 0
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let dropped = self.status.dropped
            if dropped > reported {
                self.events.publish(.framesDropped(new: dropped - reported, total: dropped))
                reported = dropped
            }
            self.tellPages()
        }
        timer.resume()
        lock.withLock { dropWatch = timer }
    }

    /// Frames waiting before the live encoder now.
    public var encoderQueue: Int { running.value?.live.input.queued ?? 0 }

    /// One input per video layer, each failing and retrying alone; their events go to the event stream.
    private func startVideoInputs() {
        let layers = renderer.scene.widgets.compactMap { renderer.widget(id: $0.id) as? VideoWidget }
        guard !layers.isEmpty else { return }
        let template: PipelineTemplate
        do { template = try PipelineTemplate.load("video-input") } catch {
            log("warning: video layers show no signal: \(error)")
            return
        }
        let events = self.events
        videoInputs = layers.map { w in
            VideoInput(id: w.id, source: w.config.source, loops: w.config.loop, fit: w.config.fit, i420: w.isPlate,
                       slot: w.slot, template: template, onEvent: { events.publish($0) })
        }
        for input in videoInputs { input.start() }
    }

    private func stopMusic() {
        music?.stop()
        musicCard?.stop()
    }
}
