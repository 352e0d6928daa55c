import Foundation

/// What a probe saw, frame by frame, turned into per-second and whole-run figures. Pure bookkeeping: the
/// caller says when each frame was decoded and what its timecode strip read, so tests can drive it exactly.
///
/// - dropped: frame numbers missing between two readable frames (a gap of k counts k);
/// - repeated: a frame number seen again right after itself (a freeze shows as a run of repeats);
/// - backwards: a frame number lower than the last (the source restarted or reordered); no drops counted;
/// - unreadable: decoded frames whose strip did not read (no strip, or damaged).
public struct ProbeStats: Sendable {
    public struct Second: Codable, Sendable, Equatable {
        public var second: Int
        public var frames = 0
        public var readable = 0
        public var unreadable = 0
        public var dropped = 0
        public var repeated = 0
        public var latencyMs: LatencySummary?
    }

    public struct Total: Codable, Sendable, Equatable {
        public var frames = 0
        public var seconds = 0.0
        public var fps = 0.0
        public var readable = 0
        public var unreadable = 0
        public var dropped = 0
        public var repeated = 0
        /// Runs of repeated frames, and the longest in frames (1 repeat = the picture held 2 frame times).
        public var freezes = 0
        public var longestFreezeFrames = 0
        public var backwards = 0
        public var decodeErrors = 0
        public var resolutionChanges = 0
        public var sizes: [String] = []
        public var firstFrame: UInt64?
        public var lastFrame: UInt64?
        public var latencyMs: LatencySummary?
        /// Latency of the first frame: joining costs (connection, waiting for a key frame, queued frames) that
        /// the steady-state percentiles leave out.
        public var firstFrameLatencyMs: Double?
        /// From the probe's start (connecting; for RTSP also DESCRIBE, SETUP and PLAY) to its first decoded frame:
        /// how long a viewer joining waits for a picture. Live streams only.
        public var joinMs: Double?
        /// Gaps of more than `stallMs` between two frames' arrivals (a viewer's picture stopped), and the longest gap.
        public var stalls = 0
        public var longestGapMs = 0.0

        public init() {}
    }

    public private(set) var total = Total()
    /// Finished seconds, oldest first; only the newest `keepSeconds` are kept (the totals keep everything).
    public private(set) var seconds: [Second] = []
    public let keepSeconds: Int
    /// False for a recording: latency is then the file's age, not a measurement, and is not kept.
    public let measuresLatency: Bool
    private var start: Double?
    private var current: Second?
    private var currentLatencies: [Double] = []
    private var histogram = LatencyHistogram()
    /// The latencies the percentiles count, in seconds, in the buckets every probe exports (`ProbeBuckets`).
    public private(set) var latencyBuckets = BucketCounts(bounds: ProbeBuckets.latencySeconds)
    private var lastFrame: UInt64?
    private var lastSize: String?
    private var repeatRun = 0
    /// Unreadable frames since the last readable one: a gap in frame numbers that spans them is not a drop.
    private var unreadableSinceReadable = 0
    public private(set) var lastArrival: Double?
    /// A gap between arrivals longer than this is a stall (what a viewer sees as the picture stopping).
    public static let stallMs = 500.0
    /// When the probe started reading (ms since 1970), for `joinMs`; nil leaves it out.
    public var startedMs: Double?

    /// Frames decoded within `warmupMs` of the first one count for everything but the latency percentiles:
    /// right after joining, frames queued during the connection arrive in a burst.
    public let warmupMs: Double

    public init(measuresLatency: Bool = true, warmupMs: Double = 1000, keepSeconds: Int = 86_400) {
        self.measuresLatency = measuresLatency
        self.warmupMs = warmupMs
        self.keepSeconds = keepSeconds
    }

    /// One decoded frame: when it was decoded (ms since 1970), its size, and what its strip read. A file's frames
    /// count in the file's time instead: `arrivalMs` where the frame ends, `startsMs` where it starts (the run's
    /// span is then the file's, from its first frame's start).
    /// `timed`: false for a frame counted without its picture (an accounting viewer's, numbered by its timestamp):
    /// its reading carries no time, so it gives no latency.
    public mutating func frame(arrivalMs: Double, startsMs: Double? = nil, width: Int, height: Int,
                               reading: TimecodeCodec.Reading?, timed: Bool = true) {
        if start == nil {
            start = startsMs ?? arrivalMs
            if measuresLatency, let startedMs { total.joinMs = arrivalMs - startedMs }
        }
        roll(to: arrivalMs)
        if let lastArrival {
            let gap = arrivalMs - lastArrival
            total.longestGapMs = max(total.longestGapMs, gap)
            if gap > Self.stallMs { total.stalls += 1 }
        }
        lastArrival = arrivalMs
        total.frames += 1
        current!.frames += 1
        let size = "\(width)x\(height)"
        if size != lastSize {
            if lastSize != nil { total.resolutionChanges += 1 }
            if !total.sizes.contains(size) { total.sizes.append(size) }
            lastSize = size
        }
        guard let reading else {
            total.unreadable += 1
            current!.unreadable += 1
            unreadableSinceReadable += 1
            return
        }
        let unreadableBefore = unreadableSinceReadable
        unreadableSinceReadable = 0
        total.readable += 1
        current!.readable += 1
        if total.firstFrame == nil { total.firstFrame = reading.frame }
        if let last = lastFrame {
            if reading.frame == last {
                total.repeated += 1
                current!.repeated += 1
                repeatRun += 1
                if repeatRun == 1 { total.freezes += 1 }
                total.longestFreezeFrames = max(total.longestFreezeFrames, repeatRun)
            } else {
                repeatRun = 0
                if reading.frame > last {
                    // Frames that arrived but could not be read are not missing.
                    let gap = max(0, Int(reading.frame - last - 1) - unreadableBefore)
                    total.dropped += gap
                    current!.dropped += gap
                } else {
                    total.backwards += 1
                }
            }
        }
        lastFrame = reading.frame
        total.lastFrame = reading.frame
        // A repeated frame's latency would be its age on screen, not transport time: measured on new frames.
        if measuresLatency && timed && repeatRun == 0 {
            let ms = arrivalMs - Double(reading.wallMilliseconds)
            if total.firstFrameLatencyMs == nil { total.firstFrameLatencyMs = ms }
            if arrivalMs - start! >= warmupMs {
                histogram.add(ms)
                latencyBuckets.observe(ms / 1000)
                currentLatencies.append(ms)
            }
        }
    }

    /// A picture decoded beside the frames counted (an accounting viewer's sample): its strip's time gives a latency,
    /// its frame is already counted. Unreadable: its strip could not be read (a damaged picture).
    /// `settling`: the sample's decoder started less than `warmupMs` ago (a turn of a soak's rotating sample): the
    /// picture counts for everything but the latency percentiles, as a probe's first second does.
    public mutating func sampled(arrivalMs: Double, reading: TimecodeCodec.Reading?, settling: Bool = false) {
        guard let reading else {
            total.unreadable += 1
            current?.unreadable += 1
            return
        }
        guard measuresLatency, let start else { return }
        let ms = arrivalMs - Double(reading.wallMilliseconds)
        if total.firstFrameLatencyMs == nil { total.firstFrameLatencyMs = ms }
        if arrivalMs - start >= warmupMs && !settling {
            histogram.add(ms)
            latencyBuckets.observe(ms / 1000)
            currentLatencies.append(ms)
        }
    }

    /// The second (since the first frame) a frame decoded at `ms` falls in.
    public func secondIndex(ofArrival ms: Double) -> Int {
        guard let start else { return 0 }
        return max(0, Int((ms - start) / 1000))
    }

    public mutating func decodeError() { total.decodeErrors += 1 }

    /// Closes every second that ended before `nowMs` (call once a second even when no frames come, so a
    /// stalled stream shows seconds with 0 frames).
    public mutating func roll(to nowMs: Double) {
        guard let start else { return }
        let index = max(0, Int((nowMs - start) / 1000))
        if current == nil { current = Second(second: index) }
        while current!.second < index {
            close()
            current = Second(second: current!.second + 1)
        }
        total.seconds = max(total.seconds, (nowMs - start) / 1000)
    }

    private mutating func close() {
        guard var s = current else { return }
        s.latencyMs = LatencySummary.of(currentLatencies)
        currentLatencies.removeAll(keepingCapacity: true)
        seconds.append(s)
        if seconds.count > keepSeconds { seconds.removeFirst(seconds.count - keepSeconds) }
    }

    /// The whole run, with the second in progress closed.
    public func finished() -> (total: Total, seconds: [Second]) {
        var copy = self
        if copy.current != nil { copy.close() }
        copy.current = nil
        var t = copy.total
        t.latencyMs = histogram.summary
        t.fps = t.seconds > 0 ? Double(t.frames) / t.seconds : 0
        return (t, copy.seconds)
    }

    /// The last finished second.
    public var lastSecond: Second? { seconds.last }
    public var latencySoFar: LatencySummary? { histogram.summary }
}
