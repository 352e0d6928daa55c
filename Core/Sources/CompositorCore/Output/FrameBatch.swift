/// Encoded frames a recording collects before it hands them to its pipeline together.
///
/// Each hand-off into an output's own pipeline wakes that pipeline's thread, and then its muxer's: measured at
/// 1280x720@30, per-frame hand-offs cost about 0.1 ms a frame across the encoder's, the recording's and the
/// muxer's threads more than hand-offs of 100 ms of frames (docs/BENCHMARKS.md). A file needs no frame sooner:
/// MP4 is written in 500 ms fragments. Live outputs (pushes, RTSP) get every frame at once.
public struct FrameBatch<Frame> {
    /// The media time a batch spans before it goes out, in nanoseconds (0: every frame goes out at once).
    public let span: MediaTime
    /// At most this many frames wait, whatever their times say (a stream whose timestamps jump back).
    public let maxFrames: Int
    private var frames: [Frame] = []
    private var firstTime: MediaTime = 0

    public init(span: MediaTime, maxFrames: Int) {
        self.span = span
        self.maxFrames = max(1, maxFrames)
    }

    public var count: Int { frames.count }

    /// Adds a frame stamped `time`; returns the batch when it is complete (this frame is `span` or more after
    /// the batch's first, or the batch is full), and nothing while it collects.
    public mutating func add(_ frame: Frame, time: MediaTime) -> [Frame] {
        if frames.isEmpty { firstTime = time }
        frames.append(frame)
        let spanned = time >= firstTime && time - firstTime >= span
        guard spanned || frames.count >= maxFrames else { return [] }
        return drain()
    }

    /// Everything collected so far, in order (the output ends, or fails).
    public mutating func drain() -> [Frame] {
        let out = frames
        frames = []
        return out
    }
}
