import Foundation

/// What running probes export to Prometheus while they run (`probe --metrics`): per stream (labelled by its URL,
/// credentials left out, and its transport) the frame counters, latency, SSIM and A/V offset as histograms in the
/// buckets every machine uses (`ProbeBuckets`), and whether the probe still receives. Each probe's figures are
/// brought up to date once a second by its run; a scrape reads the last of them.
///
/// `@unchecked Sendable`: `streams` is behind `lock`.
public final class ProbeMetrics: @unchecked Sendable {
    struct Stream {
        var total = ProbeStats.Total()
        var latency = BucketCounts(bounds: ProbeBuckets.latencySeconds)
        var fidelity: FidelityStats.Total?
        var ssim: BucketCounts?
        var av = BucketCounts(bounds: ProbeBuckets.avOffsetSeconds)
        var lastTick: Int64 = -1
        var receiving = false
    }

    /// The process's own figures (a soak's): CPU, memory, and what its streams rendered and dropped.
    struct Process {
        var cpuSeconds = 0.0
        var residentBytes: UInt64 = 0
        var rendered: (frames: Int, dropped: Int)?
    }

    private let lock = NSCondition()
    private var streams: [String: (labels: PrometheusText.Labels, figures: Stream)] = [:]
    private var process: Process?
    /// Scrapes served, and the number of them when the figures last changed.
    private var scrapes = 0
    private var scrapesAtUpdate = 0

    public init() {}

    /// The labels a stream is exported under: its URL without user and password, and its transport (RTSP only).
    public static func labels(url: String, transport: String?) -> PrometheusText.Labels {
        var shown = url
        if var c = URLComponents(string: url), c.user != nil || c.password != nil {
            c.user = nil
            c.password = nil
            shown = c.string ?? url
        }
        return [("stream", shown), ("transport", transport ?? "")]
    }

    /// Brings a stream's figures up to date from its probe (once a second, on the run's thread).
    public func update(_ labels: PrometheusText.Labels, from probe: Probe, total: ProbeStats.Total, receiving: Bool) {
        let key = labels.map { "\($0.0)=\($0.1)" }.joined(separator: "\u{0}")
        let latency = probe.latencyBuckets
        let fidelity = probe.runningFidelity
        lock.lock()
        var s = streams[key]?.figures ?? Stream()
        lock.unlock()
        for t in probe.avTicks(after: s.lastTick) {
            s.av.observe(t.offsetMs / 1000)
            s.lastTick = max(s.lastTick, t.second)
        }
        s.total = total
        s.latency = latency
        s.fidelity = fidelity?.total
        s.ssim = fidelity?.ssim
        s.receiving = receiving
        lock.withLock {
            streams[key] = (labels, s)
            scrapesAtUpdate = scrapes
        }
    }

    /// A soak's own figures: CPU seconds used so far, resident memory, and its streams' rendered and dropped frames.
    public func process(cpuSeconds: Double, residentBytes: UInt64, rendered: (frames: Int, dropped: Int)?) {
        lock.withLock {
            process = Process(cpuSeconds: cpuSeconds, residentBytes: residentBytes, rendered: rendered)
            scrapesAtUpdate = scrapes
        }
    }

    /// Waits until the figures as they are now have been served once (at the end of a run, so Prometheus holds the
    /// last of them); false after `timeout` seconds.
    public func waitForScrape(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while scrapes <= scrapesAtUpdate {
            if !lock.wait(until: deadline) { return scrapes > scrapesAtUpdate }
        }
        return true
    }

    /// The exposition text of every stream.
    public func text() -> String {
        // Read and counted as served in one step: an update after this read is not taken as scraped.
        lock.lock()
        scrapes += 1
        lock.broadcast()
        let all = streams.values.sorted { $0.labels.map(\.1).joined() < $1.labels.map(\.1).joined() }
        let process = self.process
        lock.unlock()
        var t = PrometheusText()
        if let process {
            t.counter("pipcompose_soak_cpu_seconds_total", "CPU time the soak process used.", [], process.cpuSeconds)
            t.gauge("pipcompose_soak_resident_bytes", "Resident memory of the soak process.", [], Double(process.residentBytes))
            if let r = process.rendered {
                t.counter("pipcompose_soak_frames_rendered_total", "Frames the soak's streams rendered.", [], Double(r.frames))
                t.counter("pipcompose_soak_source_dropped_frames_total", "Frames the soak's streams lost.", [], Double(r.dropped))
            }
        }
        for (l, s) in all {
            t.gauge("pipcompose_probe_receiving", "1 while the probe's last second brought frames, else 0.", l, s.receiving ? 1 : 0)
            t.counter("pipcompose_probe_frames_total", "Frames decoded.", l, Double(s.total.frames))
            t.counter("pipcompose_probe_dropped_frames_total", "Frames missing between the strips read (timecode gaps).", l, Double(s.total.dropped))
            t.counter("pipcompose_probe_repeated_frames_total", "Frames whose strip repeated the one before.", l, Double(s.total.repeated))
            t.counter("pipcompose_probe_freezes_total", "Runs of repeated frames.", l, Double(s.total.freezes))
            t.counter("pipcompose_probe_unreadable_frames_total", "Frames whose strip could not be read.", l, Double(s.total.unreadable))
            t.counter("pipcompose_probe_decode_errors_total", "Decoder errors.", l, Double(s.total.decodeErrors))
            t.histogram("pipcompose_probe_latency_seconds", "Decoded time minus the time in the frame's strip, new frames after the warm-up.", l, s.latency)
            if let f = s.fidelity, let ssim = s.ssim {
                t.counter("pipcompose_probe_compared_frames_total", "Frames compared with the reference scene.", l, Double(f.compared))
                t.counter("pipcompose_probe_corrupt_frames_total", "Compared frames with a region under --corrupt-below.", l, Double(f.corrupt))
                t.histogram("pipcompose_probe_ssim", "SSIM of each compared frame against the reference.", l, ssim)
            }
            if s.av.count > 0 {
                t.histogram("pipcompose_probe_av_offset_seconds", "Sound tick onset minus the picture's second boundary (positive: sound late).", l, s.av)
            }
        }
        return t.text
    }
}
