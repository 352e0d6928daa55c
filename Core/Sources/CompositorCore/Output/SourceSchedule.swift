/// Which encoder an output takes each frame from, by frame time, so that an output moved between encoders
/// (a `fit` file letterboxed by a second encoder while the picture has another size, and back) or cut at a
/// frame (a `split` file's parts) gets every frame once and in order.
///
/// The schedule is a list of segments, each "from time T on, frames come from source S" (S nil: from nobody,
/// the output ends there). Encoders deliver concurrently, each in its own order, with their own latency: the
/// new encoder's first frame may arrive before the old one has delivered its last. So frames of a later segment
/// are held until the current segment's source has passed that segment's start (it delivered a frame at or
/// after it) or has ended; then they go out. Held frames are bounded: past `maxHeld` the old source is given up.
///
/// Pure bookkeeping, generic over the frame type, so it is tested without GStreamer.
public struct SourceSchedule<Source: Hashable, Frame> {
    public struct Segment {
        var source: Source?
        var start: UInt64
        var held: [Frame] = []
    }

    /// What to do with the frames of one call: send these now, in order; release those (not wanted).
    public struct Outcome {
        public var send: [Frame] = []
        public var release: [Frame] = []
        /// The output moved to another segment: its stream must wait for a key frame again.
        public var switched = false
        /// The output reached a segment with no source: it should end now.
        public var ended = false
    }

    public private(set) var segments: [Segment]
    public let maxHeld: Int
    /// Sources that said they deliver nothing more (they may end before the schedule reaches them).
    private var finished: Set<Source> = []
    /// Times the old source was given up on because too many frames of the new one waited.
    public private(set) var gaveUp = 0

    /// Frames come from `source` from time `start` on (earlier ones are released).
    public init(source: Source, from start: UInt64 = 0, maxHeld: Int) {
        segments = [Segment(source: source, start: start)]
        self.maxHeld = maxHeld
    }

    /// The source frames come from at the end of the schedule (nil: the output ends there).
    public var latest: Source? { segments.last!.source }

    /// From `time` on, frames come from `source`; nil: the output ends at `time`.
    public mutating func switchTo(_ source: Source?, at time: UInt64) -> Outcome {
        var out = Outcome()
        // Segments planned to start at or after the new one never happen.
        while segments.count > 1 && segments.last!.start >= time {
            out.release += segments.removeLast().held
        }
        if segments.last!.start >= time {
            segments[segments.count - 1].source = source
        } else if segments.last!.source != source {
            segments.append(Segment(source: source, start: time))
        }
        advanceWhileIdle(&out)
        return out
    }

    /// A frame stamped `time` from `source`.
    public mutating func offer(_ frame: Frame, time: UInt64, from source: Source) -> Outcome {
        var out = Outcome()
        // The current source passed the next segment's start: everything it owed has come.
        while segments.count > 1 && segments[0].source == source && time >= segments[1].start {
            advance(&out)
        }
        guard let i = segmentIndex(of: time), segments[i].source == source else {
            out.release.append(frame)
            return out
        }
        if i == 0 {
            out.send.append(frame)
            return out
        }
        segments[i].held.append(frame)
        if segments.reduce(0, { $0 + $1.held.count }) > maxHeld {
            // The old source is late beyond reason (stalled, or dropped the frames that would have moved us on).
            gaveUp += 1
            advance(&out)
        }
        return out
    }

    /// `source` will deliver nothing more (it was stopped): segments waiting on it move on.
    public mutating func ended(_ source: Source) -> Outcome {
        var out = Outcome()
        finished.insert(source)
        advanceWhileIdle(&out)
        return out
    }

    /// Every held frame, for an output that stops.
    public mutating func releaseAll() -> [Frame] {
        var frames: [Frame] = []
        for i in segments.indices {
            frames += segments[i].held
            segments[i].held = []
        }
        return frames
    }

    private func segmentIndex(of time: UInt64) -> Int? {
        guard time >= segments[0].start else { return nil }
        var i = 0
        while i + 1 < segments.count && time >= segments[i + 1].start { i += 1 }
        return i
    }

    private mutating func advance(_ out: inout Outcome) {
        segments.removeFirst()
        out.switched = true
        out.send += segments[0].held
        segments[0].held = []
        advanceWhileIdle(&out)
    }

    /// A current segment without a source, or whose source has ended, has nothing more to wait for: on to the
    /// next; a last segment without a source ends the output.
    private mutating func advanceWhileIdle(_ out: inout Outcome) {
        if segments.count > 1 && (segments[0].source.map { finished.contains($0) } ?? true) { advance(&out) }
        if segments.count == 1 && segments[0].source == nil { out.ended = true }
    }
}
