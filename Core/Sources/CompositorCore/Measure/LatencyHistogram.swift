/// Latencies in 0.1 ms bins, kept sparse (a run's latencies fall in a few hundred bins, whatever its length),
/// with the exact extremes: percentiles of a run of any length in little memory, to within 0.05 ms. Any value
/// is kept, negative ones too (the clocks of two machines that disagree).
public struct LatencyHistogram: Sendable {
    static let binMs = 0.1
    private var counts: [Int: UInt32] = [:]
    public private(set) var count = 0
    public private(set) var sum = 0.0
    public private(set) var minimum = Double.infinity
    public private(set) var maximum = -Double.infinity

    public init() {}

    public mutating func add(_ ms: Double) {
        guard ms.isFinite, abs(ms) < 1e12 else { return }
        counts[Int((ms / Self.binMs).rounded(.down)), default: 0] += 1
        count += 1
        sum += ms
        minimum = Swift.min(minimum, ms)
        maximum = Swift.max(maximum, ms)
    }

    /// The value below which `p` (0...1) of the samples lie; nil without samples.
    public func percentile(_ p: Double) -> Double? {
        guard count > 0 else { return nil }
        if p >= 1 { return maximum }
        let rank = Swift.max(1, Int((p * Double(count)).rounded(.up)))
        var seen = 0
        for bin in counts.keys.sorted() {
            seen += Int(counts[bin]!)
            if seen >= rank {
                let mid = (Double(bin) + 0.5) * Self.binMs
                return Swift.min(Swift.max(mid, minimum), maximum)
            }
        }
        return maximum
    }

    public var summary: LatencySummary? {
        guard count > 0 else { return nil }
        return LatencySummary(min: minimum, p50: percentile(0.5)!, p95: percentile(0.95)!, p99: percentile(0.99)!,
                              max: maximum, mean: sum / Double(count), samples: count)
    }
}

/// Percentiles of end-to-end latency, milliseconds.
public struct LatencySummary: Codable, Sendable, Equatable {
    /// The floor: the one figure a busy machine cannot raise for every frame, so two paths' floors differ by what
    /// their paths differ by, where their medians also carry how the load fell on each.
    public var min: Double
    public var p50: Double
    public var p95: Double
    public var p99: Double
    public var max: Double
    public var mean: Double
    public var samples: Int

    /// Exact percentiles of a small set (one second's frames).
    public static func of(_ values: [Double]) -> LatencySummary? {
        guard !values.isEmpty else { return nil }
        let s = values.sorted()
        func at(_ p: Double) -> Double { s[Swift.min(s.count - 1, Swift.max(0, Int((p * Double(s.count)).rounded(.up)) - 1))] }
        return LatencySummary(min: s.first!, p50: at(0.5), p95: at(0.95), p99: at(0.99), max: s.last!,
                              mean: s.reduce(0, +) / Double(s.count), samples: s.count)
    }
}
