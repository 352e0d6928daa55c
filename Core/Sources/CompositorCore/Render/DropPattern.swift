/// Frames deliberately left out before the encoder (`--inject-drops`), so a probe's drop count can be
/// checked against a known answer. The frame numbers still advance: the timecode strip shows the gap.
///
/// `every:N` drops one frame in N (frames N-1, 2N-1, …); `burst:K/N` drops K frames in a row every N frames
/// (frames N-K … N-1 of each N).
public struct DropPattern: Sendable, Equatable, CustomStringConvertible {
    public let period: Int
    public let burst: Int

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public init(period: Int, burst: Int) throws(Invalid) {
        guard period >= 2, period <= 100_000 else { throw Invalid(description: "the period must be 2...100000 frames, got \(period)") }
        guard burst >= 1, burst < period else {
            throw Invalid(description: "a burst must be 1...\(period - 1) frames (less than its period), got \(burst)")
        }
        self.period = period
        self.burst = burst
    }

    public static func parse(_ text: String) throws(Invalid) -> DropPattern {
        let usage = "expected every:N (one frame in N) or burst:K/N (K frames in a row every N), got '\(text)'"
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { throw Invalid(description: usage) }
        switch parts[0] {
        case "every":
            guard let n = Int(parts[1]) else { throw Invalid(description: usage) }
            return try DropPattern(period: n, burst: 1)
        case "burst":
            let kn = parts[1].split(separator: "/").map { Int($0) }
            guard kn.count == 2, let k = kn[0], let n = kn[1] else { throw Invalid(description: usage) }
            return try DropPattern(period: n, burst: k)
        default:
            throw Invalid(description: usage)
        }
    }

    public func drops(_ frame: Int64) -> Bool { frame >= 0 && Int(frame % Int64(period)) >= period - burst }

    /// How many frames strictly between `a` and `b` are dropped.
    public func dropped(between a: Int64, and b: Int64) -> Int {
        guard b > a + 1 else { return 0 }
        return (a + 1..<b).reduce(0) { $0 + (drops($1) ? 1 : 0) }
    }

    public var description: String { burst == 1 ? "every:\(period)" : "burst:\(burst)/\(period)" }
}
