import Foundation

/// The session's numbers: what `status`, the status lines, /metrics and the end-of-run summary show.
extension LiveSession {
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
        /// Frames nobody took (no output, no viewer): neither drawn nor encoded.
        public var idle: UInt64 = 0
        /// How long the live encoder's frames were really held by `--inject-delay-ms`.
        public var delayHeld: LatencySummary?
        /// The sound (nil with `--audio none`): what it is, AAC packets encoded, sample chunks dropped before it.
        public var audio: (choice: String, packets: UInt64, dropped: UInt64)?
        /// The music heard now (`--audio FILE`), and the frames of silence its decoder was late by.
        public var music: MusicPlayer.NowPlaying?
        public var musicGapFrames: Int64 = 0
        public var musicFiles = 0
        /// WebRTC viewers now (and how many are connected), the limit, and the totals since the start.
        public var webrtc: (viewers: Int, connected: Int, vp8: Int, max: Int, totals: WebRTCOutput.Counts)?
        /// Each rendition: its size, bitrate (kbit/s), frames drawn and encoded, and the outputs carrying it now.
        public var renditions: [(size: PixelSize, bitrateKbps: Int, frames: UInt64, encoded: UInt64, outputs: [String],
                                 url: String?)] = []
        /// Each WebRTC viewer, and the picture it sees (nil: the main one).
        public var webrtcViewers: [WebRTCOutput.ViewerState] = []
        /// Each rendition made for browsers' windows now: its size, frames drawn and encoded, the viewers seeing it.
        public var windowRenditions: [(size: PixelSize, frames: UInt64, encoded: UInt64, viewers: [String])] = []

        /// Frames lost anywhere: late in the loop, dropped before the encoder, or by an output's queue.
        public var dropped: UInt64 { late + encoderDropped + outputs.reduce(0) { $0 + $1.dropped } }
    }

    public var status: Status {
        let s = loop?.stats ?? FrameLoop.Stats()
        let graph = running.value
        let windows = browserRenditions?.encoders ?? [:]
        let encs = (graph?.allEncoders ?? []) + windows.values
        let (outputs, retiredHere, final, finalHeld) = lock.withLock { (ran, retiredEncoderDrops, finalEncoded, finalDelayHeld) }
        let retired = retiredHere + (browserRenditions?.retiredDrops ?? 0)
        let outs = (servers + outputs as [any Output]).map { o in
            (id: o.id, state: o.stateText, delivered: o.delivered, dropped: o.dropped, bytes: o.bytes)
        }
        var status = Status(size: s.size, frame: s.frame, rendered: s.rendered, repeated: s.repeated, late: s.late,
                            encoderDropped: encs.reduce(0) { $0 + $1.droppedFrames + $1.delayDropped } + retired,
                            encoded: graph?.live.encodedFrames ?? final,
                            outputs: outs, viewers: (rtsp?.viewers ?? 0) + (webrtc?.viewerCount ?? 0),
                            uptime: Date().timeIntervalSince(started))
        if let webrtc {
            status.webrtc = (webrtc.viewerCount, webrtc.connectedCount, webrtc.vp8Count, webrtc.maxViewers, webrtc.totals)
            let viewers = webrtc.viewerStates
            status.webrtcViewers = viewers
            status.windowRenditions = windows.keys.sorted { ($0.width, $0.height) < ($1.width, $1.height) }.map { size in
                (size, s.renditionFrames[size] ?? 0, windows[size]?.encodedFrames ?? 0,
                 viewers.filter { $0.picture == size }.map(\.id))
            }
        }
        status.restarts = outputs.map { ($0.id, $0.restarts) }
        status.renditions = options.renditions.map { r in
            (r.size, options.encoder.bitrate(forRendition: r, fps: options.fps), s.renditionFrames[r.size] ?? 0,
             graph?.renditions[r.size]?.encodedFrames ?? 0,
             graph?.topology.outputs.filter { $0.rendition == r.size }.map(\.id) ?? [], renditionRTSP[r.size]?.url)
        }
        status.injected = s.injected
        status.idle = s.idle
        status.delayHeld = graph?.live.delayHeld ?? finalHeld
        if let audio { status.audio = (audio.choice.description, audio.encodedPackets, audio.dropped) }
        status.music = music?.nowPlaying
        status.musicGapFrames = music?.gapFrames ?? 0
        status.musicFiles = music?.files.count ?? 0
        return status
    }
}
