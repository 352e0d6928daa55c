/// The JSON of `GET /v1/status`.
public struct StatusPayload: Codable, Sendable {
    public struct Output: Codable, Sendable {
        public var id: String
        public var state: String
        public var frames: UInt64
        public var dropped: UInt64
        public var bytes: UInt64
        /// Times it failed (a push retries), and the last failure's message; absent when it never failed.
        public var failures: Int?
        public var lastFailure: String?
    }

    public var state: String
    public var width: Int
    public var height: Int
    public var fps: Int
    public var frame: Int64
    public var rendered: UInt64
    public var repeated: UInt64
    public var dropped: UInt64
    /// Frames left out on purpose by `--inject-drops` (not in `dropped`).
    public var injected: UInt64
    /// Frames nobody took (no output, no viewer), neither drawn nor encoded.
    public var idle: UInt64
    /// Frames that got a buffer outside their picture's pool of fixed size, all of it being in use downstream. Always
    /// sent; optional so that a status from a pipcompose before it still decodes.
    public var unpooled: UInt64?
    public var sceneTime: Double
    public var live: Bool
    /// Every viewer: RTSP and WebRTC.
    public var viewers: Int
    /// WebRTC (`--webrtc`): sessions now, those connected, the limit, and since the start: joined, left, never
    /// connected (dropped after the timeout), refused over the limit. Absent without `--webrtc`.
    public struct WebRTC: Codable, Sendable {
        public var viewers: Int
        public var connected: Int
        /// Of `viewers`, those taking VP8 (their browsers offered no H.264).
        public var vp8: Int
        public var max: Int
        public var joined: Int
        public var left: Int
        public var timedOut: Int
        public var refused: Int
        /// Candidates the sessions trickled after their offers, those that left included.
        public var trickled: Int
        /// Each session: its codec, whether it connected, the picture it sees (`main` or a rendition's `WxH`), and
        /// the one it moves to at that picture's next key frame.
        public struct Session: Codable, Sendable {
            public var id: String
            public var codec: String
            public var connected: Bool
            public var picture: String
            public var switchingTo: String?
            /// Frames its own input dropped: it could not keep up, or had not connected yet.
            public var dropped: UInt64
            /// Candidates it trickled after its offer (`PATCH`, RFC 8840); absent for none.
            public var trickled: Int?
        }
        public var sessions: [Session]
    }
    public var webrtc: WebRTC?
    /// Each watch link (filled by the control server, which holds them): whether it lets viewers in, and who watches
    /// through it now. Absent where there is no control port.
    public struct Link: Codable, Sendable {
        public var id: String
        public var label: String?
        public var live: Bool
        public var viewers: LinkViewers.Counts
    }
    public var links: [Link]?
    public var uptime: Double
    public var outputs: [Output]
    /// Outputs that ended before the newest 16 that did (split parts, recordings stopped), as one set of counts: a run
    /// keeps each output's own entry only for those. Absent until one is folded.
    public struct Earlier: Codable, Sendable {
        public var outputs: Int
        public var frames: UInt64
        public var dropped: UInt64
        public var bytes: UInt64
        public var restarts: Int
    }
    public var earlierOutputs: Earlier?
    /// The sound: `none`, `ticks` or `tone:HZ`, and AAC packets encoded so far.
    public var audio: String
    public var audioPackets: UInt64
    /// The music heard now (`--audio FILE`): which file of how many, its title, where in it, and the silence
    /// played so far because the decoder was late. Absent without music.
    public struct Music: Codable, Sendable {
        public var index: Int
        public var files: Int
        public var file: String
        public var title: String
        public var position: Double
        public var lateSilenceMs: Double
    }
    public var music: Music?
    /// Each video layer's input: its state, frames received, frames shown new, repeated and never shown, the
    /// delay from arrival to painting (ms), restarts and the last error.
    public struct Input: Codable, Sendable {
        public var id: String
        public var source: String
        public var state: String
        public var received: UInt64
        public var shown: UInt64
        public var repeated: UInt64
        public var skipped: UInt64
        public var delayMs: Double?
        public var restarts: Int
        public var lastError: String?
        /// Frames received per second over the last second.
        public var fps: Double
        /// What the source delivers before it is scaled to the layer ("WxH"), once known.
        public var inputSize: String?
    }
    public var inputs: [Input]
    /// Each web widget's page: starting, playing or failed (and started again), the frames it made, its processes'
    /// memory, how often it was started again and why last.
    public struct Web: Codable, Sendable {
        public var id: String
        public var state: String
        public var frames: UInt64
        public var restarts: Int
        public var memoryMiB: Int
        public var lastError: String?
        public var size: String?
        /// Pictures WebKit drew that the page's process took since it started (absent where they cannot be counted).
        public var webkitFrames: UInt64?
        /// Times a new launch of the page took the place of one that had grown (`--web-renew-growth`).
        public var renewals: Int
        /// A new launch started beside the page to take its place, now: `starting`, `loaded`, or `drawn` (it is
        /// swapped in once it has drawn and settled); absent for none.
        public var renewing: String?
    }
    public var web: [Web]?
    /// Each rendition (`--rendition`): its size, its encoder's bitrate (kbit/s), frames drawn and encoded, and the
    /// outputs that carry it now (none: it is neither drawn nor encoded).
    public struct RenditionStatus: Codable, Sendable {
        public var size: String
        public var bitrateKbps: Int
        public var frames: UInt64
        public var encoded: UInt64
        public var outputs: [String]
        /// Its RTSP path, when the run serves RTSP.
        public var url: String?
    }
    public var renditions: [RenditionStatus]?
    /// Each rendition made for browsers following their windows (`--max-renditions`), while one sees it: its size,
    /// frames drawn and encoded, and the WebRTC sessions seeing it.
    public struct WindowRendition: Codable, Sendable {
        public var size: String
        public var frames: UInt64
        public var encoded: UInt64
        public var viewers: [String]
    }
    public var windows: [WindowRendition]?

    public init(_ s: LiveSession.Status, session: LiveSession) {
        state = session.playback.isPaused ? "paused" : "playing"
        width = s.size.width
        height = s.size.height
        fps = session.options.fps
        frame = s.frame
        rendered = s.rendered
        repeated = s.repeated
        dropped = s.dropped
        injected = s.injected
        idle = s.idle
        unpooled = s.unpooled
        sceneTime = session.loop.map { session.playback.media(at: $0.runningSeconds) } ?? 0
        live = session.playback.duration == nil
        viewers = s.viewers
        let sessions = s.webrtcViewers.map {
            WebRTC.Session(id: $0.id, codec: $0.codec, connected: $0.connected, picture: $0.picture?.description ?? "main",
                           switchingTo: $0.switchingTo.map { $0?.description ?? "main" }, dropped: $0.dropped,
                           trickled: $0.trickled > 0 ? $0.trickled : nil)
        }
        webrtc = s.webrtc.map { WebRTC(viewers: $0.viewers, connected: $0.connected, vp8: $0.vp8, max: $0.max, joined: $0.totals.joined,
                                       left: $0.totals.left, timedOut: $0.totals.timedOut, refused: $0.totals.refused,
                                       trickled: $0.totals.trickled, sessions: sessions) }
        uptime = s.uptime
        audio = s.audio?.choice ?? "none"
        audioPackets = s.audio?.packets ?? 0
        music = s.music.map { Music(index: $0.index, files: s.musicFiles, file: $0.file.name, title: $0.file.displayTitle,
                                    position: $0.position, lateSilenceMs: Double(s.musicGapFrames) / Double(AudioTrack.rate) * 1000) }
        inputs = s.inputs
        outputs = s.outputs.map { Output(id: $0.id, state: $0.state, frames: $0.delivered, dropped: $0.dropped, bytes: $0.bytes,
                                         failures: $0.failures?.count, lastFailure: $0.failures?.last) }
        earlierOutputs = s.earlier.map { Earlier(outputs: $0.outputs, frames: $0.delivered, dropped: $0.dropped, bytes: $0.bytes,
                                                 restarts: $0.restarts) }
        renditions = s.renditions.isEmpty ? nil : s.renditions.map {
            RenditionStatus(size: $0.size.description, bitrateKbps: $0.bitrateKbps, frames: $0.frames, encoded: $0.encoded,
                            outputs: $0.outputs, url: $0.url)
        }
        windows = s.webrtc == nil ? nil : s.windowRenditions.map {
            WindowRendition(size: $0.size.description, frames: $0.frames, encoded: $0.encoded, viewers: $0.viewers)
        }
        web = s.web.isEmpty ? nil : s.web
    }
}
