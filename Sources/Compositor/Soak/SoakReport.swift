import Foundation

/// What `pipcompose soak` writes to soak.json (and draws in soak.html).
public struct SoakReport: Codable, Sendable {
    /// One second of the whole soak.
    public struct Sample: Codable, Sendable {
        /// Seconds since the streams started.
        public var t: Int
        public var cpuPercent: Double
        public var rssBytes: UInt64
        /// Frames all streams rendered in this second.
        public var framesRendered: Int
        /// Frames the sources lost (late, encoder, RTSP queue), all streams, this second.
        public var sourceDropped: Int
        /// Decoded frames per second: the slowest viewer and the mean over viewers.
        public var viewerFpsMin: Double?
        public var viewerFpsMean: Double?
        /// Frame numbers missing at the viewers, all viewers, this second.
        public var viewerDropped: Int
        public var viewerRepeated: Int
        public var unreadable: Int
        /// Latency: the median of the viewers' medians, the worst viewer's p95/p99 and the worst frame.
        public var latencyP50: Double?
        public var latencyP95: Double?
        public var latencyP99: Double?
        public var latencyMax: Double?
        /// Pictures compared with the scene's render this second (all viewers), those found corrupt, and the
        /// lowest SSIM among them.
        public var compared: Int? = nil
        public var corrupt: Int? = nil
        public var ssimMin: Double? = nil
        /// With `--av`: the A/V offsets (ms, sound − picture) of the ticks all viewers placed this second.
        public var avOffsetMin: Double? = nil
        public var avOffsetMax: Double? = nil
        public var avTicks: Int? = nil
    }

    public struct Stream: Codable, Sendable {
        public var url: String
        public var frames: Int64
        public var dropped: UInt64
        public var viewers: Int
    }

    public struct Viewer: Codable, Sendable {
        public var url: String
        public var total: ProbeStats.Total
        public var fidelity: FidelityStats.Total?
        public var error: String?
    }

    public struct Config: Codable, Sendable {
        public var streams: Int
        public var viewers: Int
        public var width: Int
        public var height: Int
        public var fps: Int
        public var duration: Double
        public var transport: String
    }

    public struct Totals: Codable, Sendable {
        public var seconds: Int
        public var framesRendered: Int64
        public var sourceDropped: UInt64
        /// Of `sourceDropped`: frames the loops skipped because they ran late, and frames the encoders' queues
        /// dropped (the rest were dropped by outputs' queues).
        public var sourceLate: UInt64? = nil
        public var sourceEncoderDropped: UInt64? = nil
        /// Frames runs' outputs dropped from their own queues, by output (a push while its server restarts, a slow
        /// recording): each output's own loss, not the source's; a report built from Prometheus has them.
        public var outputDropped: [String: Int]? = nil
        public var viewerFrames: Int
        public var viewerDropped: Int
        public var viewerRepeated: Int
        public var unreadable: Int
        public var decodeErrors: Int
        /// Gaps of more than half a second between a viewer's frames, all viewers; and how many viewers decoded
        /// (the others, WHEP viewers of a swarm, accounted for frames without decoding them).
        public var stalls: Int? = nil
        public var decodingViewers: Int? = nil
        public var cpuPercentMean: Double
        public var rssStartBytes: UInt64
        public var rssEndBytes: UInt64
        public var rssMaxBytes: UInt64
        /// Median RSS of the last window minus the median of the first window after the warm-up; each window
        /// is a tenth of the run (at least 5 s), the warm-up a tenth (at most 60 s).
        public var rssGrowthBytes: Int64
        /// Over all viewers' steady-state frames: the median viewer's p50, the worst viewer's p99 and max.
        public var latencyP50: Double?
        public var latencyP99: Double?
        public var latencyMax: Double?
        /// Pictures compared with the scene's render over all viewers, corrupt ones, the worst viewer's SSIM p1
        /// and the lowest SSIM of any frame.
        public var compared: Int = 0
        public var corrupt: Int = 0
        public var ssimP1: Double?
        public var ssimMin: Double?
        /// With `--av`, over every tick of every viewer: how many, the offsets' extremes and mean (ms), and the
        /// drift (ms per hour, the slope of a least-squares line through offset against time).
        public var avTicks: Int? = nil
        public var avOffsetMin: Double? = nil
        public var avOffsetMax: Double? = nil
        public var avOffsetMean: Double? = nil
        public var avDriftMsPerHour: Double? = nil
    }

    public var started: String
    public var config: Config
    public var totals: Totals
    public var streams: [Stream]
    public var viewers: [Viewer]
    public var samples: [Sample]
    /// Where the figures came from when not from this process (`soak report --prometheus`): the Prometheus and
    /// the span read. Its samples are then steps of the query, its latency and SSIM percentiles from the summed
    /// buckets (no exact minimum or maximum).
    public var source: String? = nil

    public func json() -> Data {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys]
        return (try? e.encode(self)) ?? Data()
    }

    /// Median of the window after the warm-up to the median of the last window.
    static func rssGrowth(_ rss: [UInt64]) -> Int64 {
        guard rss.count >= 4 else { return 0 }
        let window = max(min(5, rss.count / 4), rss.count / 10)
        let warm = min(60, rss.count / 10)
        func median(_ s: ArraySlice<UInt64>) -> Int64 { let v = s.sorted(); return Int64(v[v.count / 2]) }
        let first = rss[warm..<min(rss.count, warm + window)]
        let last = rss[(rss.count - window)...]
        return median(last) - median(first)
    }

    static func median(_ v: [Double]) -> Double? {
        guard !v.isEmpty else { return nil }
        let s = v.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// Why the soak failed, one line each; empty when it passed: no frame dropped at a source or missed by a
    /// viewer, every strip readable, no corrupt picture, and every viewer read strips.
    public var problems: [String] {
        var problems: [String] = []
        if totals.sourceDropped > 0 { problems.append("the sources dropped \(totals.sourceDropped) frames") }
        if totals.viewerDropped > 0 { problems.append("the viewers missed \(totals.viewerDropped) frames") }
        if totals.unreadable > 0 { problems.append("\(totals.unreadable) strips were unreadable") }
        if let stalls = totals.stalls, stalls > 0 { problems.append("the viewers stalled \(stalls) times (no frame for over 0.5 s)") }
        if totals.corrupt > 0 { problems.append("\(totals.corrupt) pictures were corrupt") }
        for (j, v) in viewers.enumerated() {
            if let e = v.error { problems.append("viewer \(j): \(e)") }
            else if v.total.readable == 0 { problems.append("viewer \(j) read no timecode strip") }
        }
        return problems
    }

    /// The A/V line of the text (with `--av`), ending in a newline; empty otherwise.
    var avLine: String {
        let t = totals
        guard let n = t.avTicks else { return "" }
        func ms(_ v: Double?) -> String { v.map { String(format: "%+.2f", $0) } ?? "-" }
        return "A/V offset ms (sound − picture): min \(ms(t.avOffsetMin))  mean \(ms(t.avOffsetMean))  "
            + "max \(ms(t.avOffsetMax))  (\(n) ticks), drift \(ms(t.avDriftMsPerHour)) ms/h\n"
    }

    /// The outputs' own drops (ending in a newline), when any output dropped frames; empty otherwise.
    var outputsLine: String {
        guard let byOutput = totals.outputDropped?.filter({ $0.value > 0 }), !byOutput.isEmpty else { return "" }
        let each = byOutput.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        let n = byOutput.values.reduce(0, +)
        return "outputs: \(n) frame\(n == 1 ? "" : "s") dropped by their own queues (\(each)), not at the sources\n"
    }

    /// Lines for a person.
    public var text: String {
        let t = totals
        func mib(_ b: UInt64) -> String { String(format: "%.1f MiB", Double(b) / 1_048_576) }
        func ms(_ v: Double?) -> String { v.map { String(format: "%.1f", $0) } ?? "-" }
        return """
        soak: \(config.streams) streams\(config.width > 0 ? " × \(config.width)x\(config.height)@\(config.fps)" : ""), \(config.viewers) viewers (\(config.transport)), \(t.seconds) s
        sources: \(t.framesRendered) frames rendered, \(t.sourceDropped) dropped
        \(outputsLine)viewers: \(t.viewerFrames) frames \(t.decodingViewers.map { $0 < config.viewers ? "received (\($0) of \(config.viewers) viewers decoding at a time, in turn)" : "decoded" } ?? "decoded"), \(t.stalls ?? 0) stalls, \(t.viewerDropped) dropped, \(t.viewerRepeated) repeated, \(t.unreadable) unreadable, \(t.decodeErrors) decode errors
        latency ms: p50 \(ms(t.latencyP50))  p99 \(ms(t.latencyP99))  max \(ms(t.latencyMax))
        pictures: \(t.compared) compared with the scene's render, \(t.corrupt) corrupt, SSIM p1 \(t.ssimP1.map { String(format: "%.4f", $0) } ?? "-") min \(t.ssimMin.map { String(format: "%.4f", $0) } ?? "-")
        \(avLine)cpu \(String(format: "%.0f", t.cpuPercentMean)) % of one core; rss \(mib(t.rssStartBytes)) → \(mib(t.rssEndBytes)) (max \(mib(t.rssMaxBytes)), growth \(String(format: "%+.2f", Double(t.rssGrowthBytes) / 1_048_576)) MiB)
        """
    }
}
