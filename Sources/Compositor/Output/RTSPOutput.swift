import Foundation

/// The embedded RTSP server as an output: every media the server has prepared is fed the live encoder's
/// stream, and each viewer that starts playing gets a key frame (with SPS/PPS in band): with the next frame when
/// nobody else watches (an early key frame costs only the viewer who asked), else within half a second, shared
/// with the viewers who joined at the same time (so watchers keep a sharp picture).
///
/// Its dropped frames are those a played media could not take: a media nobody plays (described only, or every
/// viewer paused) is offered the frames too, and its full queue drops them without loss to anyone (`WatchedDrops`).
///
/// Normally there is one media, shared by every viewer whatever URL it used. While gst-rtsp-server tears one
/// media down and builds the next there can be two; each has its own feed, so one never takes another's.
///
/// `@unchecked Sendable`: the feeds and counters are behind `lock`; `source` and `frameClockBase` are set once,
/// before the server starts.
public final class RTSPOutput: @unchecked Sendable {
    /// One prepared media's appsrc and what it has been sent.
    private struct Feed {
        let input: AppSource
        var gate = StreamGate()
        let audio: AppSource?
        var audioCaps: MediaCaps?
        var drops = WatchedDrops()
        /// When it was prepared, and whether anyone has played it since.
        let ready = Date()
        var played = false
        /// Frames left out because its queue was full, and the rest of each such frame's group (see `deliver`).
        var overflow = GroupDrop()
        /// Every frame its queue lost, played or not.
        var lost: UInt64 { input.dropped + overflow.skipped }
        /// Frames this media's queue dropped while a viewer played it.
        var dropped: UInt64 { drops.counted(dropsNow: lost) }
    }

    public let id: String
    public let server: RTSPServer
    /// The path it serves: the server's main one, or a rendition's (`/pip@416x234`).
    public let mount: RTSPServer.Mount
    /// It owns the server (the main mount): it starts and stops it.
    private let ownsServer: Bool
    /// The rendition it serves (`/pip@416x234`); nil: the main picture.
    public let rendition: PixelSize?
    public let mediaLaunch: String
    private let lock = NSLock()
    private var feeds: [RTSPServer.MediaID: Feed] = [:]
    private var retiredDrops: UInt64 = 0
    private var _delivered: UInt64 = 0
    private var _bytes: UInt64 = 0
    /// The live encoder; set by the session.
    public var source: Encoder?
    /// The frame clock's base (absolute system-clock time of running time 0), once the frame loop started.
    public var frameClockBase: (@Sendable () -> MediaTime?)?

    /// The media carries the audio track as a second stream.
    public let carriesAudio: Bool
    private var _audioDelivered: UInt64 = 0

    public convenience init(endpoint: RTSPEndpoint, template: PipelineTemplate, title: String, audio: Bool = false,
                            onViewers: @escaping @Sendable (Int) -> Void) throws {
        let carries = audio && template.hasAudio
        let launch = try template.render([:], audio: carries)
        let server = RTSPServer(endpoint: endpoint, mediaLaunch: launch, title: title)
        server.onViewers = onViewers
        self.init(id: "rtsp", server: server, mount: server.main, launch: launch, audio: carries, ownsServer: true,
                  rendition: nil)
    }

    /// Another path of `main`'s server, `PATH@WxH`, serving a rendition's picture (fed from its encoder). Before the
    /// server starts.
    public convenience init(rendition: PixelSize, of main: RTSPOutput, template: PipelineTemplate) throws {
        let launch = try template.render([:], audio: main.carriesAudio)
        let mount = main.server.addMount(path: main.mount.path + "@\(rendition)", mediaLaunch: launch)
        self.init(id: "rtsp@\(rendition)", server: main.server, mount: mount, launch: launch, audio: main.carriesAudio,
                  ownsServer: false, rendition: rendition)
    }

    private init(id: String, server: RTSPServer, mount: RTSPServer.Mount, launch: String, audio: Bool, ownsServer: Bool,
                 rendition: PixelSize?) {
        self.id = id
        self.rendition = rendition
        self.server = server
        self.mount = mount
        self.ownsServer = ownsServer
        mediaLaunch = launch
        carriesAudio = audio
        mount.onMediaReady = { [weak self] media, input, audio in
            guard let self else { return }
            input.mapTimestamps(frameClockBase: { [weak self] in self?.frameClockBase?() })
            audio?.mapTimestamps(exact: true, frameClockBase: { [weak self] in self?.frameClockBase?() })
            // The first viewer's DESCRIBE waits for this media's first packet, a key frame: when nobody watches
            // yet, it is the next frame (a spaced one kept new viewers waiting up to half a second).
            let alone = self.nobodyWatches
            self.lock.withLock {
                self.feeds[media] = Feed(input: input, audio: audio)
            }
            self.source?.requestKeyFrameForViewer(now: alone)
        }
        mount.onMediaGone = { [weak self] media in
            guard let self else { return }
            self.lock.withLock {
                guard var gone = self.feeds.removeValue(forKey: media) else { return }
                self.retiredDrops += gone.dropped
                gone.audio?.endOfStream()
                gone.gate.reset()
            }
        }
        mount.onMediaPlaying = { [weak self] media, on in
            guard let self else { return }
            self.lock.withLock {
                guard var feed = self.feeds[media] else { return }
                feed.drops.playing(on, dropsNow: feed.lost)
                if on { feed.played = true }
                self.feeds[media] = feed
            }
        }
        mount.onPlay = { [weak self] in
            guard let self else { return }
            // Each viewer that starts playing needs a key frame; the encoder spaces and shares them, so viewers
            // joining together (or a client that plays in a loop) do not blur the picture for everyone.
            self.source?.requestKeyFrameForViewer()
        }
        mount.onStaleStart = { [weak self] in
            guard let self else { return }
            // A new transport's sink dropped what it started with: the key frame the media was prepared with, stale
            // after waiting for the PLAY, or the middle of a group of pictures. Its viewers have no picture yet.
            // Unless others watch, the next frame is their key frame.
            let others = self.source?.isWatched(besides: self) ?? false
            self.source?.requestKeyFrameForViewer(now: !others && self.server.viewers <= 1)
        }
    }

    /// Nobody looks at the encoder's pictures: no media of this server is played and no other output watches.
    private var nobodyWatches: Bool {
        guard !isPlayed else { return false }
        return !(source?.isWatched(besides: self) ?? false)
    }

    /// Someone plays a media of this server.
    var isPlayed: Bool { lock.withLock { feeds.values.contains { $0.drops.isPlaying } } }

    /// Starts the server (the main mount's output only: the others' paths are served by it).
    public func start() throws { if ownsServer { try server.start() } }
    public var url: String { server.url(of: mount) }
    /// How long a media prepared for a DESCRIBE waits for its PLAY before it stops counting as wanted (a client
    /// that only asks for the description, a health check, makes nobody draw for it for long).
    static let describeWait: TimeInterval = 10

    /// Someone plays this path's media, or has just asked for it: its picture is worth drawing.
    public var isWanted: Bool {
        let now = Date()
        return lock.withLock {
            feeds.values.contains { $0.drops.isPlaying || (!$0.played && now.timeIntervalSince($0.ready) < Self.describeWait) }
        }
    }
    public var viewers: Int { server.viewers }
    public var delivered: UInt64 { lock.withLock { _delivered } }
    public var bytes: UInt64 { lock.withLock { _bytes } }
    public var dropped: UInt64 { lock.withLock { retiredDrops + feeds.values.reduce(0) { $0 + $1.dropped } } }
    /// Medias being fed now (one, except while the server replaces one).
    public var medias: Int { lock.withLock { feeds.count } }

    /// Called on the encoder's streaming thread. The frame keeps the frame clock's timestamps; each media's
    /// `MediaClockMapper` turns them into its own running time as the frame leaves its appsrc.
    ///
    /// A media whose queue is full (its pipeline behind: a burst after the frame loop caught up, a busy machine) loses
    /// this frame and the rest of its group, up to the next key frame, which its viewers are then given as soon as
    /// the encoder spaces one: appsrc's own leak would leave out the queue's oldest frame instead, a hole inside a
    /// group, and every later frame of that group would decode to garbage. Its viewers see the picture stop, never
    /// break.
    public func deliver(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        var sent = false, wantKey = false
        lock.withLock {
            for media in Array(feeds.keys) {
                guard var feed = feeds[media] else { continue }
                defer { feeds[media] = feed }
                guard feed.gate.admit(buffer) else { continue }
                switch feed.overflow.admit(buffer, into: feed.input) {
                case .push: break
                case .rest: continue
                case .full:
                    // A media nobody plays fills its queue by design: nobody waits for its key frame.
                    if feed.drops.isPlaying { wantKey = true }
                    continue
                }
                feed.gate.pass(caps, to: feed.input)
                // Each media restamps its own copy (memory shared) as it leaves the appsrc.
                feed.input.push(buffer.shallowCopy())
                sent = true
            }
            if sent {
                _delivered += 1
                _bytes += UInt64(buffer.size)
            }
        }
        if wantKey { source?.requestKeyFrameForViewer() }
    }

    /// AAC packets handed to the medias.
    public var audioDelivered: UInt64 { lock.withLock { _audioDelivered } }

    /// Called on the audio encoder's streaming thread: each media gets the packet with the frame clock's
    /// timestamps, which its `MediaClockMapper` maps to the media's running time like the picture's.
    public func deliverAudio(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        lock.lock()
        defer { lock.unlock() }
        for media in Array(feeds.keys) {
            guard var feed = feeds[media], let audio = feed.audio else { continue }
            if let caps, feed.audioCaps == nil || feed.audioCaps!.pointer != caps.pointer {
                audio.setCaps(caps)
                feed.audioCaps = caps
                feeds[media] = feed
            }
            audio.push(buffer.shallowCopy())
            _audioDelivered += 1
        }
    }

    public func stop() {
        lock.withLock {
            for (_, var feed) in feeds {
                feed.input.endOfStream()
                feed.audio?.endOfStream()
                feed.gate.reset()
            }
            feeds = [:]
        }
        if ownsServer { server.stop() }
    }
}

extension RTSPOutput: Output {
    public var stateText: String { "serving \(url)" }
    public func open() throws { try start() }

    public func feed(from encoder: Encoder) {
        source = encoder
        encoder.subscribe(self, watching: { [weak self] in self?.isPlayed ?? false }) { [weak self] b, c in self?.deliver(b, c) }
    }

    public func hear(_ track: AudioTrack) {
        track.subscribe(self) { [weak self] b, c in self?.deliverAudio(b, c) }
    }

    public func finish(timeout: TimeInterval) -> OutputEnding {
        stop()
        return .finalized
    }
}

extension RTSPOutput: ViewerOutput {
    /// The server's viewers, whatever path they play, counted by the main path's output alone.
    public var viewerCount: Int { ownsServer ? server.viewers : 0 }
    public var wantsMain: Bool { rendition == nil && isWanted }
    public var wantedRenditions: Set<PixelSize> { rendition.map { isWanted ? [$0] : [] } ?? [] }

    public func serve(from sources: ServingSources) {
        frameClockBase = sources.frameClockBase
        guard let encoder = rendition.map({ sources.renditions[$0] }) ?? sources.main else { return }
        feed(from: encoder)
    }

    public func report(into status: inout LiveSession.Status) {
        guard let rendition, let i = status.renditions.firstIndex(where: { $0.size == rendition }) else { return }
        status.renditions[i].url = url
    }
}
