import Foundation

/// Runs a soak: starts the streams and the probes, samples everything once a second, stops, and writes the
/// report (soak.json and soak.html).
public final class SoakRunner: @unchecked Sendable {
    public let config: SoakConfig
    private let log: @Sendable (String) -> Void
    private var sessions: [LiveSession] = []
    private var probes: [Probe] = []
    private var probeErrors: [Int: String] = [:]

    public init(config: SoakConfig, log: @escaping @Sendable (String) -> Void) {
        self.config = config
        self.log = log
    }

    /// Blocks for the duration (or until `shouldStop` says so); returns the report, already written.
    public func run(shouldStop: @escaping () -> Bool) throws -> SoakReport {
        try config.validate()
        try config.prepareReportDirectory()
        let startedAt = ISO8601DateFormatter().string(from: Date())
        do {
            for i in 0..<config.streams {
                var options = LiveOptions(scene: try config.scene(i), size: config.size, fps: config.fps,
                                          outputs: [.rtsp(RTSPEndpoint(host: "127.0.0.1", port: 0, path: "/soak\(i)"))])
                // Many encoders on few cores: one thread each wastes less than each guessing the core count.
                if config.streams > 1 { options.encoder.threads = 1 }
                let session = LiveSession(options: options, log: { [log] in log("stream \(i): \($0)") })
                try session.prepare()
                try session.start()
                sessions.append(session)
            }
            for j in 0..<config.viewers {
                let url = sessions[j % sessions.count].rtsp!.url
                let probe = try Probe(url: url, transport: config.transport)
                try probe.start()
                probes.append(probe)
            }
        } catch {
            stopAll()
            throw error
        }
        log("soak: \(config.streams) streams, \(config.viewers) viewers, \(Int(config.duration)) s")
        var samples: [SoakReport.Sample] = []
        var sampler = ProcessSampler()
        var lastFrames = sessions.map { $0.status.frame }
        var lastDropped = sessions.map { $0.status.dropped }
        var cpuSum = 0.0
        var rssAll: [UInt64] = []
        var rssMax: UInt64 = 0
        let start = ProcessSampler.monotonic()
        var second = 0
        let wake = DispatchSemaphore(value: 0)
        while Double(second) < config.duration && !shouldStop() {
            second += 1
            // Sample on whole seconds of the run, whatever the sampling itself cost.
            let due = start + Double(second)
            _ = wake.wait(timeout: .now() + max(0, due - ProcessSampler.monotonic()))
            let statuses = sessions.map(\.status)
            let frames = statuses.map(\.frame), dropped = statuses.map(\.dropped)
            let ticks = probes.map { $0.tick().second }
            var s = SoakReport.Sample(t: second, cpuPercent: sampler.cpuPercent(),
                                      rssBytes: ProcessSampler.residentBytes() ?? 0,
                                      framesRendered: Int(zip(frames, lastFrames).reduce(0) { $0 + $1.0 - $1.1 }),
                                      sourceDropped: Int(zip(dropped, lastDropped).reduce(0) { $0 + $1.0 - $1.1 }),
                                      viewerDropped: 0, viewerRepeated: 0, unreadable: 0)
            lastFrames = frames
            lastDropped = dropped
            let fps = ticks.compactMap { $0.map { Double($0.frames) } }
            s.viewerFpsMin = fps.min()
            s.viewerFpsMean = fps.isEmpty ? nil : fps.reduce(0, +) / Double(fps.count)
            s.viewerDropped = ticks.reduce(0) { $0 + ($1?.dropped ?? 0) }
            s.viewerRepeated = ticks.reduce(0) { $0 + ($1?.repeated ?? 0) }
            s.unreadable = ticks.reduce(0) { $0 + ($1?.unreadable ?? 0) }
            let lat = ticks.compactMap { $0?.latencyMs }
            s.latencyP50 = SoakReport.median(lat.map(\.p50))
            s.latencyP95 = lat.map(\.p95).max()
            s.latencyP99 = lat.map(\.p99).max()
            s.latencyMax = lat.map(\.max).max()
            cpuSum += s.cpuPercent
            rssAll.append(s.rssBytes)
            rssMax = max(rssMax, s.rssBytes)
            samples.append(s)
            if samples.count > config.keepSamples { samples.removeFirst(samples.count - config.keepSamples) }
            if rssAll.count > config.keepSamples { rssAll.removeFirst(rssAll.count - config.keepSamples) }
            log(String(format: "%5ds cpu %3.0f%% rss %6.1f MiB  rendered %d  viewers fps min %@ latency p50 %@ p99 %@  "
                       + "dropped %d/%d", second, s.cpuPercent, Double(s.rssBytes) / 1_048_576, s.framesRendered,
                       s.viewerFpsMin.map { String(format: "%.0f", $0) } ?? "-",
                       s.latencyP50.map { String(format: "%.1f", $0) } ?? "-",
                       s.latencyP99.map { String(format: "%.1f", $0) } ?? "-", s.sourceDropped, s.viewerDropped))
            for (j, p) in probes.enumerated() where p.ended && probeErrors[j] == nil {
                probeErrors[j] = p.failure.map { "\($0)" } ?? "the stream ended"
                log("viewer \(j): \(probeErrors[j]!)")
            }
        }
        let viewerTotals = probes.map { $0.snapshot().total }
        let streamStatus = sessions.map(\.status)
        stopAll()
        let lat = viewerTotals.compactMap(\.latencyMs)
        let totals = SoakReport.Totals(
            seconds: samples.count,
            framesRendered: streamStatus.reduce(0) { $0 + $1.frame + 1 },
            sourceDropped: streamStatus.reduce(0) { $0 + $1.dropped },
            viewerFrames: viewerTotals.reduce(0) { $0 + $1.frames },
            viewerDropped: viewerTotals.reduce(0) { $0 + $1.dropped },
            viewerRepeated: viewerTotals.reduce(0) { $0 + $1.repeated },
            unreadable: viewerTotals.reduce(0) { $0 + $1.unreadable },
            decodeErrors: viewerTotals.reduce(0) { $0 + $1.decodeErrors },
            cpuPercentMean: samples.isEmpty ? 0 : cpuSum / Double(samples.count),
            rssStartBytes: rssAll.first ?? 0, rssEndBytes: rssAll.last ?? 0, rssMaxBytes: rssMax,
            rssGrowthBytes: SoakReport.rssGrowth(rssAll),
            latencyP50: SoakReport.median(lat.map(\.p50)), latencyP99: lat.map(\.p99).max(),
            latencyMax: lat.map(\.max).max())
        let report = SoakReport(
            started: startedAt,
            config: .init(streams: config.streams, viewers: config.viewers, width: config.size.width,
                          height: config.size.height, fps: config.fps, duration: config.duration,
                          transport: config.transport.rawValue),
            totals: totals,
            streams: sessions.enumerated().map { i, s in
                .init(url: s.rtsp?.url ?? "", frames: streamStatus[i].frame + 1, dropped: streamStatus[i].dropped,
                      viewers: (0..<config.viewers).filter { $0 % config.streams == i }.count)
            },
            viewers: probes.enumerated().map { j, p in .init(url: p.url, total: viewerTotals[j], error: probeErrors[j]) },
            samples: samples)
        try write(report)
        return report
    }

    private func stopAll() {
        probes.forEach { $0.stop() }
        sessions.forEach { _ = $0.stop() }
    }

    public var jsonPath: String { config.reportDirectory + "/soak.json" }
    public var htmlPath: String { config.reportDirectory + "/soak.html" }

    private func write(_ report: SoakReport) throws {
        do {
            try report.json().write(to: URL(fileURLWithPath: jsonPath))
            try Data(SoakPlot.html(report).utf8).write(to: URL(fileURLWithPath: htmlPath))
        } catch {
            throw SoakConfig.Invalid(description: "cannot write the report in \(config.reportDirectory): "
                                     + "\(error.localizedDescription)")
        }
    }
}
