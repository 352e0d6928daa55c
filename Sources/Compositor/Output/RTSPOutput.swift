import CGst
import Foundation

/// The embedded RTSP server as an output: the shared media is fed the live encoder's stream, and each viewer
/// that starts playing gets a key frame (with SPS/PPS in band) so the picture shows at once.
public final class RTSPOutput: @unchecked Sendable {
    public let id = "rtsp"
    public let server: RTSPServer
    public let mediaLaunch: String
    private let lock = NSLock()
    private var feed: AppSource?
    private var gate = StreamGate()
    private var _delivered: UInt64 = 0
    private var _bytes: UInt64 = 0
    /// The live encoder; set by the session.
    public var source: Encoder?

    public init(endpoint: RTSPEndpoint, template: PipelineTemplate, title: String,
                onViewers: @escaping @Sendable (Int) -> Void) throws {
        mediaLaunch = try template.render([:])
        server = RTSPServer(endpoint: endpoint, mediaLaunch: mediaLaunch, title: title)
        server.onViewers = onViewers
        server.onMediaReady = { [weak self] feed in
            guard let self else { return }
            self.lock.withLock {
                self.feed = feed
                self.gate.reset()
            }
            self.source?.requestKeyFrame()
        }
        server.onMediaGone = { [weak self] in
            guard let self else { return }
            self.lock.withLock {
                self.feed = nil
                self.gate.reset()
            }
        }
        server.onPlay = { [weak self] in self?.source?.requestKeyFrame() }
    }

    public func start() throws { try server.start() }
    public var url: String { server.url }
    public var viewers: Int { server.viewers }
    public var delivered: UInt64 { lock.withLock { _delivered } }
    public var bytes: UInt64 { lock.withLock { _bytes } }
    public var dropped: UInt64 { lock.withLock { feed?.dropped ?? 0 } }

    /// Called on the encoder's streaming thread. Timestamps are cleared: the media's appsrc stamps its own
    /// running time (do-timestamp), as a live camera would.
    public func deliver(_ buffer: UnsafeMutablePointer<GstBuffer>, _ caps: UnsafeMutablePointer<GstCaps>?) {
        lock.lock()
        defer { lock.unlock() }
        guard let feed, gate.admit(buffer) else { return }
        gate.pass(caps, to: feed)
        let copy = gst_buffer_copy(buffer)!
        cgst_buffer_clear_timestamps(copy)
        feed.push(copy)
        _delivered += 1
        _bytes += UInt64(gst_buffer_get_size(buffer))
    }

    public func stop() {
        lock.withLock {
            feed?.endOfStream()
            feed = nil
        }
        server.stop()
    }
}
