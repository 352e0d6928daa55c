import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A soak report built from a Prometheus that scraped probes and soaks (`--metrics`) on any number of machines
/// (`pipcompose soak report --prometheus URL`): the same soak.json and soak.html as a soak writes, for the whole
/// fleet, over a span of time.
///
/// Counts per step are rates of the counters times the step; the totals are each series' rise over the span
/// (its largest value in the span minus its value at the start, or zero for a series born in the span: exact for
/// counters that start at zero and never restart, as the probes' do); latency, SSIM and A/V percentiles come from the fleet's summed buckets (`histogram_quantile`), so a
/// percentile is good to a bucket, and minimum and maximum are not known.
public struct PrometheusSoakReport {
    public var prometheus: URL
    public var from: Date
    public var to: Date
    /// Seconds between samples (0: the targets' scrape interval, or as many as keep the query under Prometheus's
    /// 11 000 points).
    public var step = 0
    /// The longest scrape interval of Prometheus's targets, in seconds (0: ask Prometheus when building).
    public var scrapeSeconds = 0

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public init(prometheus: URL, from: Date, to: Date) {
        self.prometheus = prometheus
        self.from = from
        self.to = to
    }

    var span: Int { max(1, Int(to.timeIntervalSince(from).rounded())) }
    var scrape: Int { max(1, scrapeSeconds) }
    var stepSeconds: Int { step > 0 ? step : max(scrape, Int((Double(span) / 11_000).rounded(.up))) }
    /// The window rates are taken over: at least four scrapes (Prometheus's advice; fewer may hold one sample, and a
    /// rate needs two), and a few steps.
    var window: String { "\(max(4 * scrape, 3 * stepSeconds))s" }

    public func build() throws(Failure) -> SoakReport {
        guard to > from else { throw Failure(description: "--to must come after --from") }
        if scrapeSeconds == 0 {
            var asked = self
            asked.scrapeSeconds = try scrapeInterval()
            return try asked.build()
        }
        // Every series seen in the span, ended ones too (an instant query alone finds only those still scraped).
        let frames = try instant("max_over_time(pipcompose_probe_frames_total[\(span)s])")
        guard !frames.isEmpty else {
            throw Failure(description: "\(prometheus.absoluteString) has no pipcompose_probe_frames_total between "
                          + "\(Self.stamp(from)) and \(Self.stamp(to)): is it scraping probes or soaks run with --metrics?")
        }
        let samples = try steps()
        func rise(_ metric: String) throws(Failure) -> Int { try rises(metric).values.reduce(0, +) }
        func quantile(_ q: Double, _ metric: String, scale: Double = 1) throws(Failure) -> Double? {
            try instant("histogram_quantile(\(q), sum by (le) (increase(\(metric)_bucket[\(span)s])))").first.map { $0.1 * scale }
        }
        let cpu = samples.map(\.cpuPercent), rss = samples.map(\.rssBytes)
        let avCount = try rise("pipcompose_probe_av_offset_seconds_count")
        let avSum = try risesExact("pipcompose_probe_av_offset_seconds_sum").values.reduce(0, +)
        // Each kind of source's drops; a run's late and encoder drops only where a run was scraped.
        let dropped = try Self.sources.dropped.map { m throws(Failure) in try rises(m) }
        func sum(_ kind: [String: Int]) -> UInt64? { kind.isEmpty ? nil : UInt64(max(0, kind.values.reduce(0, +))) }
        var totals = SoakReport.Totals(
            seconds: samples.count * stepSeconds,
            framesRendered: Int64(try rise(Self.sources.rendered)),
            sourceDropped: dropped.compactMap(sum).reduce(0, +),
            sourceLate: sum(dropped[1]), sourceEncoderDropped: sum(dropped[2]),
            viewerFrames: try rise("pipcompose_probe_frames_total"),
            viewerDropped: try rise("pipcompose_probe_dropped_frames_total"),
            viewerRepeated: try rise("pipcompose_probe_repeated_frames_total"),
            unreadable: try rise("pipcompose_probe_unreadable_frames_total"),
            decodeErrors: try rise("pipcompose_probe_decode_errors_total"),
            cpuPercentMean: cpu.isEmpty ? 0 : cpu.reduce(0, +) / Double(cpu.count),
            rssStartBytes: rss.first ?? 0, rssEndBytes: rss.last ?? 0, rssMaxBytes: rss.max() ?? 0,
            rssGrowthBytes: SoakReport.rssGrowth(rss),
            latencyP50: try quantile(0.5, "pipcompose_probe_latency_seconds", scale: 1000),
            latencyP99: try quantile(0.99, "pipcompose_probe_latency_seconds", scale: 1000),
            latencyMax: nil,
            compared: try rise("pipcompose_probe_compared_frames_total"),
            corrupt: try rise("pipcompose_probe_corrupt_frames_total"),
            ssimP1: try quantile(0.01, "pipcompose_probe_ssim"), ssimMin: nil,
            avTicks: avCount > 0 ? avCount : nil,
            avOffsetMin: avCount > 0 ? try quantile(0.01, "pipcompose_probe_av_offset_seconds", scale: 1000) : nil,
            avOffsetMax: avCount > 0 ? try quantile(0.99, "pipcompose_probe_av_offset_seconds", scale: 1000) : nil,
            avOffsetMean: avCount > 0 ? avSum / Double(avCount) * 1000 : nil)
        let outputs = try outputDrops()
        if !outputs.isEmpty { totals.outputDropped = outputs }
        // One viewer per series of frames: its own rises over the span.
        let viewerFrames = try rises("pipcompose_probe_frames_total")
        let viewerDropped = try rises("pipcompose_probe_dropped_frames_total")
        let viewerRepeated = try rises("pipcompose_probe_repeated_frames_total")
        let viewerUnreadable = try rises("pipcompose_probe_unreadable_frames_total")
        let viewerErrors = try rises("pipcompose_probe_decode_errors_total")
        let viewers: [SoakReport.Viewer] = frames.map { labels, _ in
            let k = Self.key(labels)
            var t = ProbeStats.Total()
            t.frames = viewerFrames[k] ?? 0
            t.dropped = viewerDropped[k] ?? 0
            t.repeated = viewerRepeated[k] ?? 0
            t.unreadable = viewerUnreadable[k] ?? 0
            t.readable = max(0, t.frames - t.unreadable)
            t.decodeErrors = viewerErrors[k] ?? 0
            return SoakReport.Viewer(url: Self.name(labels), total: t, fidelity: nil, error: nil)
        }.sorted { $0.url < $1.url }
        let byStream = Dictionary(grouping: frames, by: { $0.0["stream"] ?? "" })
        let streams = byStream.keys.sorted().map { url in
            SoakReport.Stream(url: url, frames: Int64(byStream[url]!.map { viewerFrames[Self.key($0.0)] ?? 0 }.max() ?? 0),
                              dropped: 0, viewers: byStream[url]!.count)
        }
        let transports = Set(frames.compactMap { $0.0["transport"] }.filter { !$0.isEmpty }).sorted()
        return SoakReport(
            started: Self.stamp(from),
            config: .init(streams: streams.count, viewers: viewers.count, width: 0, height: 0, fps: 0,
                          duration: Double(span), transport: transports.joined(separator: "+")),
            totals: totals, streams: streams, viewers: viewers, samples: samples,
            source: "read from \(prometheus.absoluteString), \(Self.stamp(from)) to \(Self.stamp(to)), a sample every "
                + "\(stepSeconds) s; percentiles from the fleet's summed buckets")
    }

    /// The sources' figures, as selectors of both kinds of process that make pictures: soaks (`soak --metrics`) and
    /// runs (`run`'s /metrics: a soak of a run by its own probes has no soak process). Web pages' memory is not in
    /// it: `pipcompose_web_resident_bytes` has it, by widget.
    static let sources = (
        cpu: #"{__name__=~"pipcompose_soak_cpu_seconds_total|pipcompose_process_cpu_seconds_total"}"#,
        memory: #"{__name__=~"pipcompose_soak_resident_bytes|pipcompose_process_resident_bytes"}"#,
        rendered: #"{__name__=~"pipcompose_soak_frames_rendered_total|pipcompose_frames_rendered_total"}"#,
        // A run's frames lost before any output: late in its loop or at its encoders (its
        // pipcompose_frames_dropped_total adds what each output's own queue dropped, reported apart). Summed
        // one by one: a run has both counters with the same labels, which one selector's rate cannot hold.
        dropped: ["pipcompose_soak_source_dropped_frames_total", "pipcompose_frames_late_total",
                  "pipcompose_frames_encoder_dropped_total"])

    /// Each series' rise over the span, by its labels: its largest value in the span minus its value at the start
    /// (0 for a series that began within the span: the exporters' counters start at zero with their process, and
    /// a probe counts frames before Prometheus first reads it).
    func rises(_ metric: String) throws(Failure) -> [String: Int] {
        try risesExact(metric).mapValues { Int($0.rounded()) }
    }

    func risesExact(_ metric: String) throws(Failure) -> [String: Double] {
        var before: [String: Double] = [:]
        for (labels, v) in try instant("last_over_time(\(metric)[5m])", at: from) { before[Self.key(labels)] = v }
        var out: [String: Double] = [:]
        for (labels, v) in try instant("max_over_time(\(metric)[\(span)s])") {
            let k = Self.key(labels)
            out[k] = max(0, v - (before[k] ?? 0))
        }
        return out
    }

    /// What each run's output dropped from its own queue over the span, by output id (with its run's instance when
    /// several runs were scraped).
    func outputDrops() throws(Failure) -> [String: Int] {
        var labelsOf: [String: [String: String]] = [:]
        for (labels, _) in try instant("max_over_time(pipcompose_output_dropped_total[\(span)s])") {
            labelsOf[Self.key(labels)] = labels
        }
        let severalRuns = Set(labelsOf.values.compactMap { $0["instance"] }).count > 1
        var out: [String: Int] = [:]
        for (k, v) in try rises("pipcompose_output_dropped_total") {
            let labels = labelsOf[k] ?? [:]
            var name = labels["output"] ?? k
            if severalRuns, let instance = labels["instance"] { name += " @ " + instance }
            out[name, default: 0] += v
        }
        return out
    }

    /// The samples: one per step over the span.
    func steps() throws(Failure) -> [SoakReport.Sample] {
        let w = window, st = Double(stepSeconds)
        func series(_ q: String) throws(Failure) -> [Int: Double] {
            var out: [Int: Double] = [:]
            for (t, v) in try range(q) { out[t] = v }
            return out
        }
        let cpu = try series("sum(rate(\(Self.sources.cpu)[\(w)])) * 100")
        let rss = try series("sum(\(Self.sources.memory))")
        let rendered = try series("sum(rate(\(Self.sources.rendered)[\(w)])) * \(st)")
        var sourceDropped: [Int: Double] = [:]
        for m in Self.sources.dropped {
            for (t, v) in try series("sum(rate(\(m)[\(w)])) * \(st)") { sourceDropped[t, default: 0] += v }
        }
        let fpsMin = try series("min(rate(pipcompose_probe_frames_total[\(w)]))")
        let fpsMean = try series("avg(rate(pipcompose_probe_frames_total[\(w)]))")
        let dropped = try series("sum(rate(pipcompose_probe_dropped_frames_total[\(w)])) * \(st)")
        let repeated = try series("sum(rate(pipcompose_probe_repeated_frames_total[\(w)])) * \(st)")
        let unreadable = try series("sum(rate(pipcompose_probe_unreadable_frames_total[\(w)])) * \(st)")
        func q(_ p: Double, _ m: String) -> String { "histogram_quantile(\(p), sum by (le) (rate(\(m)_bucket[\(w)])))" }
        let p50 = try series(q(0.5, "pipcompose_probe_latency_seconds") + " * 1000")
        let p95 = try series(q(0.95, "pipcompose_probe_latency_seconds") + " * 1000")
        let p99 = try series(q(0.99, "pipcompose_probe_latency_seconds") + " * 1000")
        let compared = try series("sum(rate(pipcompose_probe_compared_frames_total[\(w)])) * \(st)")
        let corrupt = try series("sum(rate(pipcompose_probe_corrupt_frames_total[\(w)])) * \(st)")
        let ssim = try series(q(0.01, "pipcompose_probe_ssim"))
        let avMin = try series(q(0.01, "pipcompose_probe_av_offset_seconds") + " * 1000")
        let avMax = try series(q(0.99, "pipcompose_probe_av_offset_seconds") + " * 1000")
        let avTicks = try series("sum(rate(pipcompose_probe_av_offset_seconds_count[\(w)])) * \(st)")
        let times = Set(fpsMean.keys).union(p50.keys).union(cpu.keys).sorted()
        func finite(_ v: Double?) -> Double? { v.flatMap { $0.isFinite ? $0 : nil } }
        func count(_ v: Double?) -> Int { Int((finite(v) ?? 0).rounded()) }
        return times.map { t in
            var s = SoakReport.Sample(t: t, cpuPercent: finite(cpu[t]) ?? 0, rssBytes: UInt64(max(0, finite(rss[t]) ?? 0)),
                                      framesRendered: count(rendered[t]), sourceDropped: count(sourceDropped[t]),
                                      viewerFpsMin: finite(fpsMin[t]), viewerFpsMean: finite(fpsMean[t]),
                                      viewerDropped: count(dropped[t]), viewerRepeated: count(repeated[t]),
                                      unreadable: count(unreadable[t]), latencyP50: finite(p50[t]),
                                      latencyP95: finite(p95[t]), latencyP99: finite(p99[t]), latencyMax: nil)
            if compared[t] != nil {
                s.compared = count(compared[t])
                s.corrupt = count(corrupt[t])
                s.ssimMin = finite(ssim[t])
            }
            if let n = avTicks[t], n > 0 {
                s.avTicks = count(n)
                s.avOffsetMin = finite(avMin[t])
                s.avOffsetMax = finite(avMax[t])
            }
            return s
        }
    }

    // MARK: - Prometheus's HTTP API

    /// An instant query at `to`: each series' labels and value.
    func instant(_ query: String, at time: Date? = nil) throws(Failure) -> [([String: String], Double)] {
        let result = try get("/api/v1/query", ["query": query, "time": String((time ?? to).timeIntervalSince1970)])
        return result.compactMap { item in
            guard let labels = item["metric"] as? [String: String], let value = item["value"] as? [Any],
                  let text = value.last as? String, let v = Double(text), v.isFinite else { return nil }
            return (labels, v)
        }
    }

    /// A range query over the span, one step apart: (seconds since `from`, value) of its one series (the first).
    func range(_ query: String) throws(Failure) -> [(Int, Double)] {
        let result = try get("/api/v1/query_range", ["query": query, "start": String(from.timeIntervalSince1970),
                                                      "end": String(to.timeIntervalSince1970), "step": "\(stepSeconds)s"])
        guard let values = result.first?["values"] as? [[Any]] else { return [] }
        return values.compactMap { pair in
            guard let t = pair.first as? Double, let text = pair.last as? String, let v = Double(text) else { return nil }
            return (Int((t - from.timeIntervalSince1970).rounded()), v)
        }
    }

    /// The longest scrape interval of the targets Prometheus scrapes now (`/api/v1/targets`), or its default
    /// (15 s) when it lists none.
    func scrapeInterval() throws(Failure) -> Int {
        let targets = try data("/api/v1/targets", ["state": "active"])["activeTargets"] as? [[String: Any]] ?? []
        return targets.compactMap { ($0["scrapeInterval"] as? String).flatMap(Self.seconds(of:)) }.max() ?? 15
    }

    /// Seconds in a Prometheus duration such as "15s", "1m30s" or "2h"; nil for anything else.
    static func seconds(of duration: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800, "y": 31_536_000]
        var total = 0, number = ""
        for c in duration {
            if c.isNumber { number.append(c); continue }
            guard let unit = units[c], let n = Int(number) else { return nil }
            total += n * unit
            number = ""
        }
        return number.isEmpty && total > 0 ? total : nil
    }

    private func get(_ path: String, _ parameters: [String: String]) throws(Failure) -> [[String: Any]] {
        guard let result = try data(path, parameters)["result"] as? [[String: Any]] else {
            throw Failure(description: "\(prometheus.absoluteString) answered \(path) without a result")
        }
        return result
    }

    /// The `data` of a Prometheus API answer.
    private func data(_ path: String, _ parameters: [String: String]) throws(Failure) -> [String: Any] {
        guard var c = URLComponents(url: prometheus.appendingPathComponent(path), resolvingAgainstBaseURL: false) else {
            throw Failure(description: "not a URL: \(prometheus)")
        }
        c.queryItems = parameters.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        // '+' in a query is a space to Prometheus's form parser: sent escaped.
        c.percentEncodedQuery = c.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let url = c.url else { throw Failure(description: "not a URL: \(prometheus)") }
        /// `@unchecked Sendable`: written by the completion handler before `done` is signalled, read after.
        final class Answer: @unchecked Sendable { var data: Data?; var error: (any Error)?; var status = 0 }
        let answer = Answer()
        let done = DispatchSemaphore(value: 0)
        var request = URLRequest(url: url, timeoutInterval: 60)
        request.httpMethod = "GET"
        URLSession.shared.dataTask(with: request) { data, response, error in
            answer.data = data
            answer.error = error
            answer.status = (response as? HTTPURLResponse)?.statusCode ?? 0
            done.signal()
        }.resume()
        done.wait()
        if let e = answer.error {
            throw Failure(description: "cannot reach Prometheus at \(prometheus.absoluteString): \(e.localizedDescription)")
        }
        guard let data = answer.data, let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Failure(description: "\(prometheus.absoluteString) did not answer as Prometheus does (HTTP \(answer.status))")
        }
        guard json["status"] as? String == "success", let d = json["data"] as? [String: Any] else {
            throw Failure(description: "Prometheus refused a query: \(json["error"] as? String ?? "HTTP \(answer.status)")")
        }
        return d
    }

    static func key(_ labels: [String: String]) -> String {
        labels.filter { $0.key != "__name__" }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
    }

    /// A viewer's name: its stream, transport, viewer number and the instance that exported it.
    static func name(_ labels: [String: String]) -> String {
        var n = labels["stream"] ?? "?"
        if let t = labels["transport"], !t.isEmpty { n += " (\(t))" }
        if let v = labels["viewer"] { n += " viewer \(v)" }
        if let i = labels["instance"] { n += " @ \(i)" }
        return n
    }

    static func stamp(_ d: Date) -> String { ISO8601DateFormatter().string(from: d) }

    /// `now`, RFC 3339 (`2026-11-26T20:00:00Z`), seconds since 1970, or a time before now (`-90s`, `-15m`, `-2h`, `-1d`).
    public static func parseTime(_ text: String, now: Date = Date()) -> Date? {
        if text == "now" { return now }
        if let d = ISO8601DateFormatter().date(from: text) { return d }
        if let s = Double(text), s > 0 { return Date(timeIntervalSince1970: s) }
        if text.hasPrefix("-"), let unit = text.last, let n = Double(text.dropFirst().dropLast()), n > 0 {
            let scale: Double? = ["s": 1, "m": 60, "h": 3600, "d": 86_400][unit]
            if let scale { return now.addingTimeInterval(-n * scale) }
        }
        return nil
    }
}
