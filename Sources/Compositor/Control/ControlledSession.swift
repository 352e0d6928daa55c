import Foundation

/// What the control API drives: the PiP controller's verbs, the status, the picture, the events. `LiveSession` is
/// the one a run has; the HTTP layer (`ControlServer`) knows nothing else of it, so its own tests need no encoder.
public protocol ControlledSession: AnyObject, Sendable {
    var events: EventBus { get }
    /// The run's log (standard error), for refusals the API tells about.
    var log: @Sendable (String) -> Void { get }
    /// `GET /v1/status`.
    func statusPayload() -> StatusPayload
    /// `GET /metrics`: Prometheus text.
    func metricsText() -> String
    func resize(to size: PixelSize)
    func pause()
    func play()
    func skip(by seconds: Double) throws(ControlError) -> SkipOutcome
    func skipTrack(forward: Bool) throws(ControlError) -> SkipOutcome
    /// Changes widget properties before the next frame, or before the first frame at `moment` (every output,
    /// rendition and recording alike).
    func updateWidget(id: String, properties: [String: JSONValue], at moment: ChangeMoment?) throws(ControlError)
    /// Starts a recording or push of the main picture, or of `rendition` (one of the run's `--rendition`s).
    func startOutput(_ spec: OutputSpec, rendition: PixelSize?) throws(ControlError) -> String
    func stopOutput(id: String) throws(ControlError)
    /// The picture viewers see now, as PNG, scaled to fit `size`.
    func framePNG(size: PixelSize?) async throws -> Data
    /// `GET /v1/nowplaying`: what plays, where the scene is, which skips work.
    func nowPlaying() -> NowPlayingPayload
    /// The now-playing card's cover as PNG, `side` pixels on its longer side; nil when it shows none.
    func artworkPNG(side: Int) throws -> Data?
    /// WHEP, with `run --webrtc`.
    var whep: (any WHEPService)? { get }
    /// Shows WebRTC viewer `viewer` a picture laid out for its window (nil: the main picture).
    func follow(viewer: String, window: PixelSize?) throws(ControlError) -> FollowOutcome
    /// The HLS ladder's folder (`--hls`), served at `/hls/`.
    var hlsFolder: String? { get }
    /// The STUN and TURN servers a page's `RTCPeerConnection` is given, with a TURN login made now for `label`.
    func browserIceServers(label: String) -> [IceSettings.BrowserServer]
    /// RTSP viewers playing through each watch link now (`--rtsp-user`).
    var rtspViewersByLink: [String: Int] { get }
    /// The scene's picture now with web widget `id`'s template given `data` in a page of its own (the live page is
    /// not touched), as PNG.
    func webSnapshot(id: String, data: String, size: PixelSize?) async throws(ControlError) -> Data
    /// A call into web widget `id`'s page (`update`, `play`, `next`, `stop`, `remove`, `reload`, `invoke`).
    /// `at`: the call's picture lands on that frame (see `LiveSession.webCall`).
    func webCall(id: String, call: String, data: String?, name: String?, at moment: ChangeMoment?) async throws(ControlError)
        -> String
}

extension ControlledSession {
    /// Changes widget properties before the next frame.
    func updateWidget(id: String, properties: [String: JSONValue]) throws(ControlError) {
        try updateWidget(id: id, properties: properties, at: nil)
    }
}

/// Browsers' WebRTC sessions: an SDP offer answered, a session ended (`WebRTCOutput`).
public protocol WHEPService: Sendable {
    func answer(offer: String) async throws -> (id: String, sdp: String)
    func end(_ id: String) async throws
    /// Candidates session `id` found after its offer (trickle ICE); how many were taken.
    func trickle(_ id: String, fragment: TrickleFragment) async throws -> Int
    /// The sessions open now.
    var sessionIDs: [String] { get }
}

extension WebRTCOutput: WHEPService {
    public var sessionIDs: [String] { viewerStates.map(\.id) }
}

extension LiveSession: ControlledSession {
    public func statusPayload() -> StatusPayload { StatusPayload(status, session: self) }
    public func metricsText() -> String { metrics.scrape(status, queued: encoderQueue) }
    public var whep: (any WHEPService)? { servers.first(WebRTCOutput.self) }
    public var hlsFolder: String? { options.hls?.folder }
    public func browserIceServers(label: String) -> [IceSettings.BrowserServer] {
        options.webrtc?.ice.browserServers(label: label) ?? []
    }
}

/// Where a skip went: scene time (a finite scene), and the music (`--audio FILE`): the file and the second in it.
public struct SkipOutcome: Sendable {
    public var media: Double?
    public var track: (index: Int, file: String, position: Double)?

    public init(media: Double? = nil, track: (index: Int, file: String, position: Double)? = nil) {
        self.media = media
        self.track = track
    }
}
