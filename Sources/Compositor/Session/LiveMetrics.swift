import Foundation
import Metrics
import Prometheus

/// Prometheus metrics of a running session through swift-metrics: frames rendered, repeated and dropped,
/// render time, queue depth, viewers, bytes out and restarts per output. Counters advance by what the
/// session counted since the last scrape; render time is recorded per frame by the frame loop.
///
/// `@unchecked Sendable`: `last` is behind `lock`; the swift-metrics handles are thread-safe.
public final class LiveMetrics: @unchecked Sendable {
    /// One registry per process, bootstrapped into swift-metrics once.
    public static let registry: PrometheusCollectorRegistry = {
        let r = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: r)
        // Render times are fractions of a frame interval: buckets from 0.25 ms to four frames at 30 fps.
        factory.durationHistogramBuckets["pipcompose_render_seconds"] = [0.25, 0.5, 1, 2, 4, 8, 16, 33, 66, 133]
            .map { Duration.microseconds(Int64($0 * 1000)) }
        MetricsSystem.bootstrap(factory)
        return r
    }()

    private let lock = NSLock()
    private var last: [String: UInt64] = [:]
    /// The outputs that had series at the last scrape: those gone since (folded into the run's earlier outputs)
    /// lose theirs, so a run that starts outputs all day keeps a bounded set of series.
    private var outputIDs: Set<String> = []
    /// What the removed series had counted, by metric. The series `output="earlier"` carries only the rest of the
    /// folded outputs' counts (what they did after their last scrape), so a sum of increases over the outputs' series
    /// counts every frame, byte and drop once.
    private var countedByRemoved: [String: UInt64] = [:]
    private static let perOutput = ["pipcompose_output_bytes_total", "pipcompose_output_frames_total",
                                    "pipcompose_output_dropped_total", "pipcompose_output_restarts_total"]
    let renderTime: Metrics.Timer

    public init() {
        _ = Self.registry
        renderTime = Metrics.Timer(label: "pipcompose_render_seconds")
    }

    /// Advances counters by `value - last` (values only grow; a restarted output starts again from 0).
    private func advance(_ label: String, _ dimensions: [(String, String)] = [], to value: UInt64) {
        let key = Self.key(label, dimensions)
        let delta = lock.withLock { () -> UInt64 in
            let previous = last[key] ?? 0
            last[key] = value
            return value >= previous ? value - previous : value
        }
        // Made even at 0: a series exists from the first scrape (a run nobody watches draws nothing for a while).
        let counter = Counter(label: label, dimensions: dimensions)
        if delta > 0 { counter.increment(by: Int64(delta)) }
    }

    private static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
        label + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
    }

    /// Removes the series of outputs no longer in `s` (folded into `earlier`), keeping what they had counted; then
    /// brings the series `output="earlier"` to the folded outputs' counts less that.
    private func foldOutputsGone(from s: LiveSession.Status) {
        let now = Set(s.outputs.map(\.id) + s.restarts.map(\.0))
        let gone = lock.withLock { () -> Set<String> in
            defer { outputIDs = now }
            let gone = outputIDs.subtracting(now)
            for id in gone {
                for label in Self.perOutput {
                    countedByRemoved[label, default: 0] += last.removeValue(forKey: Self.key(label, [("output", id)])) ?? 0
                }
            }
            return gone
        }
        for id in gone { for label in Self.perOutput { Counter(label: label, dimensions: [("output", id)]).destroy() } }
        guard let e = s.earlier else { return }
        let counted = lock.withLock { countedByRemoved }
        for (label, total) in zip(Self.perOutput, [e.bytes, e.delivered, e.dropped, UInt64(e.restarts)]) {
            advance(label, [("output", "earlier")], to: total - min(total, counted[label] ?? 0))
        }
    }

    /// The exposition text, after bringing every value up to date with `status`.
    public func scrape(_ s: LiveSession.Status, queued: Int) -> String {
        advance("pipcompose_frames_rendered_total", to: s.rendered)
        advance("pipcompose_frames_repeated_total", to: s.repeated)
        advance("pipcompose_frames_dropped_total", to: s.dropped)
        // Of those, the ones lost before any output: what a soak of the run counts as the source's drops.
        advance("pipcompose_frames_late_total", to: s.late)
        advance("pipcompose_frames_encoder_dropped_total", to: s.encoderDropped)
        advance("pipcompose_frames_encoded_total", to: s.encoded)
        advance("pipcompose_frames_idle_total", to: s.idle)
        advance("pipcompose_frames_unpooled_total", to: s.unpooled)
        Gauge(label: "pipcompose_viewers").record(s.viewers)
        if let w = s.webrtc {
            Gauge(label: "pipcompose_webrtc_viewers").record(w.viewers)
            advance("pipcompose_webrtc_sessions_total", to: UInt64(w.totals.joined))
            advance("pipcompose_webrtc_timed_out_total", to: UInt64(w.totals.timedOut))
            advance("pipcompose_webrtc_refused_total", to: UInt64(w.totals.refused))
            advance("pipcompose_webrtc_trickled_candidates_total", to: UInt64(w.totals.trickled))
        }
        Gauge(label: "pipcompose_encoder_queue_frames").record(queued)
        Gauge(label: "pipcompose_width").record(s.size.width)
        Gauge(label: "pipcompose_height").record(s.size.height)
        for o in s.outputs {
            advance("pipcompose_output_bytes_total", [("output", o.id)], to: o.bytes)
            advance("pipcompose_output_frames_total", [("output", o.id)], to: o.delivered)
            advance("pipcompose_output_dropped_total", [("output", o.id)], to: o.dropped)
        }
        for (id, n) in s.restarts { advance("pipcompose_output_restarts_total", [("output", id)], to: UInt64(n)) }
        foldOutputsGone(from: s)
        return Self.registry.emitToString() + Self.processText(web: s.web)
    }

    /// The process itself and each web page's processes (WebKit's included): what a soak of a run plots as its CPU
    /// and memory (`soak report --prometheus`), and what an hour's memory slope is fitted to. Written as exposition
    /// text of its own: CPU seconds are fractional, which swift-metrics' counters are not.
    static func processText(web: [StatusPayload.Web]) -> String {
        var t = PrometheusText()
        if let cpu = ProcessSampler.cpuSeconds() {
            t.counter("pipcompose_process_cpu_seconds_total", "CPU time this pipcompose used (user and system).", [], cpu)
        }
        if let rss = ProcessSampler.residentBytes() {
            t.gauge("pipcompose_process_resident_bytes", "Resident memory of this pipcompose.", [], Double(rss))
        }
        let heap = Gst.heapFigures()
        t.gauge("pipcompose_process_heap_allocated_bytes", "Bytes in the blocks glibc's allocator has given out (its heaps' "
                + "and those mapped apart): what this pipcompose holds, whatever pages they sit in.", [], Double(heap.givenOut))
        t.gauge("pipcompose_process_heap_mapped_bytes", "Of the allocated bytes, those in blocks mapped apart (large "
                + "ones: pictures, encoders' planes); each goes back to the system when it is freed.", [], Double(heap.mappedApart))
        t.gauge("pipcompose_process_heap_free_bytes", "Bytes in free blocks inside glibc's heaps, resident or given back: "
                + "resident memory rising while the allocated bytes do not is pages kept for live blocks among free ones.",
                [], Double(heap.free))
        for page in web {
            t.gauge("pipcompose_web_resident_bytes", "Resident memory of a web widget's page: its process and WebKit's.",
                    [("widget", page.id)], Double(page.memoryMiB) * 1_048_576)
            t.counter("pipcompose_web_restarts_total", "Times a web widget's page was started again after a failure.",
                      [("widget", page.id)], Double(page.restarts))
            t.counter("pipcompose_web_renewals_total", "Times a new launch of a web widget's page took the place of one "
                      + "that had grown.", [("widget", page.id)], Double(page.renewals))
        }
        return t.text
    }
}
