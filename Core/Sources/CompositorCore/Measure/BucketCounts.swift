/// Observations counted under fixed upper bounds, as a Prometheus histogram carries them: a count per bucket
/// (`le`), the sum and the count. The bounds are the same on every machine, so a fleet's buckets add up and
/// `histogram_quantile` over their sum is the fleet's percentile. Memory is fixed whatever the run's length.
public struct BucketCounts: Sendable, Equatable {
    /// Upper bounds, ascending; a last bucket without bound (`+Inf`) takes the rest.
    public let bounds: [Double]
    /// Observations per bucket (not cumulative), one more than `bounds`.
    public private(set) var counts: [UInt64]
    public private(set) var sum = 0.0
    public private(set) var count: UInt64 = 0

    public init(bounds: [Double]) {
        precondition(zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "bucket bounds must ascend")
        self.bounds = bounds
        counts = Array(repeating: 0, count: bounds.count + 1)
    }

    /// Counts `value` in the first bucket whose bound it does not exceed (non-finite values are left out).
    public mutating func observe(_ value: Double) {
        guard value.isFinite else { return }
        var lo = 0, hi = bounds.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if value <= bounds[mid] { hi = mid } else { lo = mid + 1 }
        }
        counts[lo] += 1
        sum += value
        count += 1
    }

    /// Observations at or under each bound, then all of them (`+Inf`): what the `_bucket` series carry.
    public var cumulative: [UInt64] {
        var running: UInt64 = 0
        return counts.map { running += $0; return running }
    }
}

/// The buckets every probe and soak exports (docs/MEASURE.md lists them): the same everywhere, so a fleet's
/// histograms can be summed.
public enum ProbeBuckets {
    /// Latency in seconds: sub-millisecond to 10 s, finest where live streams sit (4-50 ms).
    public static let latencySeconds: [Double] = [0.0005, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008,
                                                  0.010, 0.012, 0.015, 0.020, 0.025, 0.033, 0.050, 0.075, 0.100,
                                                  0.150, 0.250, 0.500, 1, 2.5, 5, 10]
    /// SSIM of a decoded picture against its reference.
    public static let ssim: [Double] = [0.5, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995, 0.998, 0.999, 1]
    /// A/V offset in seconds (positive: the sound late), symmetric around 0.
    public static let avOffsetSeconds: [Double] = [-0.5, -0.2, -0.1, -0.08, -0.06, -0.045, -0.03, -0.02, -0.01, -0.005,
                                                   0, 0.005, 0.01, 0.02, 0.03, 0.045, 0.06, 0.08, 0.1, 0.2, 0.5]
}
