import Foundation

/// One measurement of a stream from start to report: what `pipcompose probe` decides, in the library. Starts a
/// `Probe`, reports each second, ends on the stream's end, the duration, `shouldStop` or a silent source, and
/// judges the totals against the thresholds.
public struct ProbeRun {
    public var url: String
    public var transport: Probe.Transport = .tcp
    public var jitterBufferMs = 0
    /// Also decode the sound and place its ticks against the picture (`--av`).
    public var sound = false
    /// Seconds after the first frame left out of the latency percentiles.
    public var warmup = 1.0
    /// Stop after this many seconds; nil: until the stream ends or `shouldStop`.
    public var duration: Double?
    /// Give up when no frame came in this many seconds.
    public var timeout = 15.0
    /// A scene to compare each picture with, and its name for the report.
    public var reference: (name: String, picture: ReferencePicture)?
    public var corruptBelow = 0.9
    public var maxLatencyMs: Double?
    public var maxDrops: Int?
    public var maxCorrupt: Int?
    /// Where the figures are exported each second while the run lasts (`--metrics`).
    public var metrics: ProbeMetrics?
    /// A WHEP source's token and STUN/TURN servers.
    public var webrtc = WHEPClient.Options()

    public init(url: String) { self.url = url }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Measures until the end; `onSecond` gets a one-line status each second. Returns the report, whose
    /// `failures` name the thresholds crossed; throws when nothing could be measured.
    public func run(shouldStop: () -> Bool, onSecond: (String) -> Void,
                    warn: (String) -> Void) throws(Failure) -> ProbeReport {
        let probe: Probe
        do {
            probe = try Probe(url: url, transport: transport, jitterBufferMs: jitterBufferMs, sound: sound, warmupMs: warmup * 1000,
                              reference: reference?.picture, corruptBelow: corruptBelow, webrtc: webrtc)
            try probe.start()
        } catch { throw Failure(description: "cannot probe \(url): \(error)") }
        let started = Date()
        let labels = ProbeMetrics.labels(url: url, transport: transportName)
        var framesBefore = 0
        // A live source that stopped sending (frames came, then none for `timeout`): the run ends, and says so.
        var lastFrameAt = Date()
        var silentFor: Double?
        // Why the run ended, for a run that ended before its first frame.
        var endedBy = "the stream ended"
        // The series exist from the start (at zero), so a scrape before the first frame finds the stream.
        metrics?.update(labels, from: probe, total: ProbeStats.Total(), receiving: false)
        while true {
            let ended = probe.waitUntilEnded(timeout: 1)
            let (second, total, latency) = probe.tick()
            let elapsed = Date().timeIntervalSince(started)
            if let second { onSecond(Self.statusLine(second, total, latency)) }
            metrics?.update(labels, from: probe, total: total, receiving: !ended && total.frames > framesBefore)
            if total.frames > framesBefore { lastFrameAt = Date() }
            framesBefore = total.frames
            if probe.isLive && total.frames > 0 && Date().timeIntervalSince(lastFrameAt) >= timeout {
                silentFor = Date().timeIntervalSince(lastFrameAt)
                break
            }
            if ended { break }
            if shouldStop() {
                endedBy = String(format: "it was stopped after %.1f s", elapsed)
                break
            }
            if let duration, elapsed >= duration {
                endedBy = String(format: "the --duration of %g s ran out", duration)
                break
            }
            if total.frames == 0 && elapsed >= timeout {
                let why = probe.connectionDiagnosis
                probe.stop()
                if let why {
                    throw Failure(description: "no frame from \(url) in \(Int(timeout)) s: \(why) (a server behind a NAT "
                                  + "needs --ice-server stun:… or turn:…; or try a longer --timeout)")
                }
                throw Failure(description: "no frame from \(url) in \(Int(timeout)) s (is it playing? try --transport "
                              + "\(transport == .tcp ? "udp" : "tcp") or a longer --timeout)")
            }
        }
        let failure = probe.failure
        let (total, seconds) = probe.snapshot()
        probe.stop()
        if let failure, total.frames == 0 { throw Failure(description: "cannot probe \(url): \(failure)") }
        if let failure { warn("the stream ended with an error: \(failure)") }
        let fidelity = probe.fidelity.map {
            ProbeReport.Fidelity(scene: reference?.name ?? "", total: $0.total, seconds: $0.seconds, errors: $0.errors,
                                 excluded: reference?.picture.excluded ?? [])
        }
        var failures = ProbeReport.failures(total, live: probe.isLive, maxLatencyMs: maxLatencyMs, maxDrops: maxDrops,
                                            fidelity: fidelity?.total, maxCorrupt: maxCorrupt)
        // A run that saw nothing measured nothing: a script or a fleet that trusts the exit status must not read it
        // as a pass.
        if total.frames == 0 {
            failures.append("no frame came: \(endedBy) before the first frame")
        }
        if let silentFor {
            failures.append(String(format: "the stream stopped: no frame for %.0f s after %d frames (--timeout)", silentFor, total.frames))
        }
        metrics?.update(labels, from: probe, total: total, receiving: false)
        var report = ProbeReport(url: url, transport: transportName,
                                 live: probe.isLive, total: total, seconds: seconds, fidelity: fidelity, failures: failures)
        if sound {
            report.av = probe.avSync() ?? AVSyncStats.Report.silent
            if report.av?.decoded == false { warn("\(url) carries no sound: the A/V offset cannot be measured") }
        }
        return report
    }

    /// The transport for RTSP URLs; nil for others.
    var transportName: String? { url.lowercased().hasPrefix("rtsp") ? transport.rawValue : nil }

    /// `  12s  30.0 fps  latency p50 8.1 p99 12.0 max 14.2 ms  dropped 0 repeated 0 unreadable 0`
    public static func statusLine(_ second: ProbeStats.Second, _ total: ProbeStats.Total, _ latency: LatencySummary?) -> String {
        let l = latency.map { String(format: "latency p50 %.1f p99 %.1f max %.1f ms", $0.p50, $0.p99, $0.max) }
            ?? (total.readable > 0 ? "latency -" : "no timecode")
        return String(format: "%4ds %5.1f fps  ", second.second + 1, Double(second.frames)) + l
            + "  dropped \(total.dropped) repeated \(total.repeated) unreadable \(total.unreadable)"
    }
}
