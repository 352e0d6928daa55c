import CGst
import Foundation

/// The embedded RTSP server as an output: every media the server has prepared is fed the live encoder's
/// stream, and each viewer that starts playing gets a key frame (with SPS/PPS in band) so the picture shows at
/// once.
///
/// Normally there is one media, shared by every viewer whatever URL it used. While gst-rtsp-server tears one
/// media down and builds the next there can be two; each has its own feed, so one never takes another's.
public final class RTSPOutput: @unchecked Sendable {
    /// One prepared media's appsrc and what it has been sent.
    private struct Feed {
        let input: AppSource
        var gate = StreamGate()
    }

    public let id = "rtsp"
    public let server: RTSPServer
    public let mediaLaunch: String
    private let lock = NSLock()
    private var feeds: [RTSPServer.MediaID: Feed] = [:]
    private var retiredDrops: UInt64 = 0
    /// When a media last became ready (uptime ns), until the first viewer plays it.
    private var readyAt: UInt64?
    private var _delivered: UInt64 = 0
    private var _bytes: UInt64 = 0
    /// The live encoder; set by the session.
    public var source: Encoder?
    /// The frame clock's base (absolute system-clock time of running time 0), once the frame loop started.
    public var frameClockBase: (@Sendable () -> GstClockTime?)?

    public init(endpoint: RTSPEndpoint, template: PipelineTemplate, title: String,
                onViewers: @escaping @Sendable (Int) -> Void) throws {
        mediaLaunch = try template.render([:])
        server = RTSPServer(endpoint: endpoint, mediaLaunch: mediaLaunch, title: title)
        server.onViewers = onViewers
        server.onMediaReady = { [weak self] media, input in
            guard let self else { return }
            MediaClockMapper(frameClockBase: { [weak self] in self?.frameClockBase?() }).attach(to: input.element)
            self.lock.withLock {
                self.feeds[media] = Feed(input: input)
                self.readyAt = DispatchTime.now().uptimeNanoseconds
            }
            self.source?.requestKeyFrame()
        }
        server.onMediaGone = { [weak self] media in
            guard let self else { return }
            self.lock.withLock {
                guard var gone = self.feeds.removeValue(forKey: media) else { return }
                self.retiredDrops += gone.input.dropped
                gone.gate.reset()
            }
        }
        server.onPlay = { [weak self] in
            guard let self else { return }
            // A media that just became ready starts with the key frame asked for then; a second one a frame
            // later would be starved of bits (x264 spends two frames' budget on key frames) and the first thing
            // the viewer sees would be blurred. Later viewers of a playing media get a key frame of their own.
            let fresh = self.lock.withLock { () -> Bool in
                defer { self.readyAt = nil }
                return self.readyAt.map { DispatchTime.now().uptimeNanoseconds - $0 < 2_000_000_000 } ?? false
            }
            if !fresh { self.source?.requestKeyFrame() }
        }
    }

    public func start() throws { try server.start() }
    public var url: String { server.url }
    public var viewers: Int { server.viewers }
    public var delivered: UInt64 { lock.withLock { _delivered } }
    public var bytes: UInt64 { lock.withLock { _bytes } }
    public var dropped: UInt64 { lock.withLock { retiredDrops + feeds.values.reduce(0) { $0 + $1.input.dropped } } }
    /// Medias being fed now (one, except while the server replaces one).
    public var medias: Int { lock.withLock { feeds.count } }

    /// Called on the encoder's streaming thread. The frame keeps the frame clock's timestamps; each media's
    /// `MediaClockMapper` turns them into its own running time as the frame leaves its appsrc.
    public func deliver(_ buffer: UnsafeMutablePointer<GstBuffer>, _ caps: UnsafeMutablePointer<GstCaps>?) {
        lock.lock()
        defer { lock.unlock() }
        var sent = false
        for media in Array(feeds.keys) {
            guard var feed = feeds[media], feed.gate.admit(buffer) else { continue }
            feed.gate.pass(caps, to: feed.input)
            feed.input.push(gst_buffer_copy(buffer)!)
            feeds[media] = feed
            sent = true
        }
        if sent {
            _delivered += 1
            _bytes += UInt64(gst_buffer_get_size(buffer))
        }
    }

    public func stop() {
        lock.withLock {
            for (_, var feed) in feeds {
                feed.input.endOfStream()
                feed.gate.reset()
            }
            feeds = [:]
        }
        server.stop()
    }
}
