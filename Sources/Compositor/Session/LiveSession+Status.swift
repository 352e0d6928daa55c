import Foundation

/// The session's numbers: what `status`, the status lines, /metrics and the end-of-run summary show.
extension LiveSession {
    /// Numbers for status lines and the end-of-run summary.
    public struct Status: Sendable {
        /// One output's counters.
        public struct OutputCounts: Sendable {
            public var id: String
            /// `running`, `failed`, `serving rtsp://…`.
            public var state: String
            public var delivered: UInt64
            public var dropped: UInt64
            public var bytes: UInt64
            /// How often it failed, and the last failure (nil: never).
            public var failures: OutputFailures? = nil
        }
        /// The sound: what it is, AAC packets encoded, sample chunks dropped before it.
        public struct Sound: Sendable {
            public var choice: String
            public var packets: UInt64
            public var dropped: UInt64
        }
        /// WebRTC viewers now (and how many are connected, how many take VP8), the limit, and the totals since the start.
        public struct WebRTCCounts: Sendable {
            public var viewers: Int
            public var connected: Int
            public var vp8: Int
            public var max: Int
            public var totals: WebRTCOutput.Counts
        }
        /// A rendition: its size, bitrate (kbit/s), frames drawn and encoded, the outputs carrying it now, and its
        /// RTSP path when the run serves one.
        public struct RenditionCounts: Sendable {
            public var size: PixelSize
            public var bitrateKbps: Int
            public var frames: UInt64
            public var encoded: UInt64
            public var outputs: [String]
            public var url: String?
        }
        /// A rendition made for browsers' windows: its size, frames drawn and encoded, the viewers seeing it.
        public struct WindowCounts: Sendable {
            public var size: PixelSize
            public var frames: UInt64
            public var encoded: UInt64
            public var viewers: [String]
        }

        public var size: PixelSize
        public var frame: Int64
        public var rendered: UInt64
        public var repeated: UInt64
        public var late: UInt64
        public var encoderDropped: UInt64
        public var encoded: UInt64
        public var outputs: [OutputCounts]
        public var viewers: Int
        public var uptime: Double
        /// Restarts of outputs that retry (pushes), by id.
        public var restarts: [(String, Int)] = []
        /// Outputs that ended before the newest ones that did, as one set of counts (`RunTally.keptEnded`): their
        /// frames, drops and bytes are not in `outputs`, and their drops are in `dropped`.
        public var earlier: Earlier?
        public struct Earlier: Sendable {
            public var outputs = 0
            public var delivered: UInt64 = 0
            public var dropped: UInt64 = 0
            public var bytes: UInt64 = 0
            public var restarts = 0

            public init() {}

            /// One output's final counts.
            init(_ out: any PlacedOutput) {
                (outputs, delivered, dropped, bytes, restarts) = (1, out.delivered, out.dropped, out.bytes, out.restarts)
            }

            mutating func add(_ other: Earlier) {
                outputs += other.outputs
                delivered += other.delivered
                dropped += other.dropped
                bytes += other.bytes
                restarts += other.restarts
            }
        }
        /// Frames left out on purpose (`--inject-drops`); not in `dropped`.
        public var injected: UInt64 = 0
        /// Frames nobody took (no output, no viewer): neither drawn nor encoded.
        public var idle: UInt64 = 0
        /// Frames that got a buffer outside their picture's pool, every buffer of it being in use (`FramePool`).
        public var unpooled: UInt64 = 0
        /// How long the live encoder's frames were really held by `--inject-delay-ms`.
        public var delayHeld: LatencySummary?
        /// The sound (nil with `--audio none`).
        public var audio: Sound?
        /// The music heard now (`--audio FILE`), and the frames of silence its decoder was late by.
        public var music: MusicPlayer.NowPlaying?
        public var musicGapFrames: Int64 = 0
        public var musicFiles = 0
        /// WebRTC (`--webrtc`).
        public var webrtc: WebRTCCounts?
        /// Each rendition (`--rendition`).
        public var renditions: [RenditionCounts] = []
        /// Each WebRTC viewer, and the picture it sees (nil: the main one).
        public var webrtcViewers: [WebRTCOutput.ViewerState] = []
        /// Each rendition made for browsers' windows now.
        public var windowRenditions: [WindowCounts] = []
        /// Each video layer's input, and each web widget's page.
        public var inputs: [StatusPayload.Input] = []
        public var web: [StatusPayload.Web] = []

        /// Frames lost anywhere: late in the loop, dropped before the encoder, or by an output's queue.
        public var dropped: UInt64 { late + encoderDropped + outputs.reduce(0) { $0 + $1.dropped } + (earlier?.dropped ?? 0) }
    }

    public var status: Status {
        let s = loop?.stats ?? FrameLoop.Stats()
        let graph = running.value
        let windows = servers.windows?.encoders ?? [:]
        let encs = (graph?.allEncoders ?? []) + windows.values
        let ended = tally.snapshot
        let retired = ended.retiredDrops + (servers.windows?.retiredDrops ?? 0)
        let outs = (servers.all + ended.ran as [any Output]).map { o in
            Status.OutputCounts(id: o.id, state: o.stateText, delivered: o.delivered, dropped: o.dropped, bytes: o.bytes,
                                failures: o.failures)
        }
        var status = Status(size: s.size, frame: s.frame, rendered: s.rendered, repeated: s.repeated, late: s.late,
                            encoderDropped: encs.reduce(0) { $0 + $1.droppedFrames + $1.delayDropped } + retired,
                            encoded: graph?.live.encodedFrames ?? ended.finalEncoded,
                            outputs: outs, viewers: servers.viewerCount, uptime: Date().timeIntervalSince(tally.began))
        status.restarts = ended.ran.map { ($0.id, $0.restarts) }
        if ended.earlier.outputs > 0 { status.earlier = ended.earlier }
        status.renditions = options.renditions.map { r in
            Status.RenditionCounts(size: r.size, bitrateKbps: options.encoder.bitrate(forRendition: r, fps: options.fps),
                                   frames: s.renditionFrames[r.size] ?? 0,
                                   encoded: graph?.renditions[r.size]?.encodedFrames ?? 0,
                                   outputs: graph?.topology.outputs.filter { $0.rendition == r.size }.map(\.id) ?? [])
        }
        for server in servers.all { server.report(into: &status) }
        if servers.windows != nil {
            status.windowRenditions = windows.keys.sorted { ($0.width, $0.height) < ($1.width, $1.height) }.map { size in
                Status.WindowCounts(size: size, frames: s.renditionFrames[size] ?? 0, encoded: windows[size]?.encodedFrames ?? 0,
                                    viewers: status.webrtcViewers.filter { $0.picture == size }.map(\.id))
            }
        }
        status.injected = s.injected
        status.idle = s.idle
        status.unpooled = s.unpooled
        status.delayHeld = graph?.live.delayHeld ?? ended.finalDelayHeld
        if let audio = inputs.sound { status.audio = Status.Sound(choice: audio.choice.description, packets: audio.encodedPackets, dropped: audio.dropped) }
        inputs.report(into: &status)
        return status
    }
}
