/// An HLS rung's bit rates from its segments, in constant memory over any run: the peak (a segment's size over its
/// duration, the largest seen) and the average over every segment the run made. Each update reads the segments the
/// media playlist lists now; a segment is counted once, and only the names listed now are remembered (one that left
/// the playlist never comes back; its bits stay in the sums).
public struct SegmentRates: Sendable {
    private var counted: Set<String> = []
    private var bits = 0.0
    private var seconds = 0.0
    public private(set) var peak: Double?

    public init() {}

    /// Counts the segments of `listed` not counted yet; `size` gives a segment's bytes (nil: not readable yet, so it
    /// is tried again at the next update).
    public mutating func update(listed: [HLSPlaylist.Segment], size: (String) -> Double?) {
        for s in listed where s.duration > 0 && !counted.contains(s.uri) {
            guard let bytes = size(s.uri) else { continue }
            counted.insert(s.uri)
            bits += bytes * 8
            seconds += s.duration
            peak = max(peak ?? 0, bytes * 8 / s.duration)
        }
        counted.formIntersection(listed.map(\.uri))
    }

    /// Bits per second over every segment counted; nil before the first.
    public var average: Double? { seconds > 0 ? bits / seconds : nil }

    /// Segment names remembered now: at most the playlist's window.
    public var remembered: Int { counted.count }
}
