import Foundation

/// Runs a soak: starts the streams and the probes, samples everything once a second, stops, and writes the
/// report (soak.json and soak.html).
///
/// `@unchecked Sendable`: sessions, probes and errors are set up and read on the thread that calls `run`; the sampler reads the sessions' and probes' own thread-safe counters.
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
            for i in 0..<(config.viewersOnly ? 0 : config.streams) {
                var options = LiveOptions(scene: try config.scene(i), size: config.size, fps: config.fps,
                                          outputs: [.rtsp(RTSPEndpoint(host: "127.0.0.1", port: 0, path: "/soak\(i)"))])
                // Many encoders on few cores: one thread each wastes less than each guessing the core count.
                if config.streams > 1 { options.encoder.threads = 1 }
                if config.av { options.audio = .ticks }
                let session = LiveSession(options: options, log: { [log] in log("stream \(i): \($0)") })
                try session.prepare()
                // Held before it starts, so a half-started stream is stopped with the others on failure.
                sessions.append(session)
                try session.start()
            }
            for j in 0..<config.viewers {
                let url = config.viewersOnly ? config.viewersOf[j % config.viewersOf.count] : sessions[j % sessions.count].rtspURL!
                let scene = config.viewersOnly ? config.reference : try config.scene(j % sessions.count)
                // A WHEP swarm (`--decode K` below the viewers): every viewer accounts for frames without decoding,
                // and K of them at a time decode as well, in turn (`rotate` below).
                let decodes = !config.rotatesSample
                let probe = try Probe(url: url, transport: config.transport, sound: config.av && decodes, keepSeconds: 4,
                                      reference: scene.map { ReferencePicture(scene: $0) },
                                      compareEvery: config.compareEvery, webrtc: config.webrtc, decodes: decodes)
                try probe.start()
                probes.append(probe)
            }
        } catch {
            stopAll()
            throw error
        }
        if config.viewersOnly {
            log("soak: \(config.viewers) viewers of \(config.viewersOf.joined(separator: ", ")), \(Int(config.duration)) s")
        } else {
            log("soak: \(config.streams) streams, \(config.viewers) viewers, \(Int(config.duration)) s")
        }
        // The sample: K viewers decode, the next K after each `rotateEvery` seconds.
        var sampleStart = 0
        func rotate() {
            guard config.rotatesSample, !probes.isEmpty else { return }
            let k = config.decodingViewers
            let chosen = Set((0..<k).map { (sampleStart + $0) % probes.count })
            for (j, p) in probes.enumerated() where !chosen.contains(j) { p.sampling(false) }
            for j in chosen.sorted() { probes[j].sampling(true) }
            sampleStart = (sampleStart + k) % probes.count
        }
        rotate()
        let labels = probes.enumerated().map { j, p in
            ProbeMetrics.labels(url: p.url, transport: config.transport.rawValue) + [("viewer", String(j))]
        }
        for (j, p) in probes.enumerated() { config.metrics?.update(labels[j], from: p, total: ProbeStats.Total(), receiving: false) }
        var renderedTotal = 0, sourceDroppedTotal = 0, cpuSeconds = 0.0
        // Samples go to disk as they are taken (one JSON line a second), not into memory: a week-long soak
        // holds nothing per second but one number for the memory trend, and a killed soak leaves its data.
        let samplesPath = config.reportDirectory + "/samples.jsonl"
        guard FileManager.default.createFile(atPath: samplesPath, contents: nil),
              let samplesFile = FileHandle(forWritingAtPath: samplesPath) else {
            stopAll()
            throw SoakConfig.Invalid(description: "cannot write \(samplesPath)")
        }
        defer { try? samplesFile.close() }
        let lineEncoder = JSONEncoder()
        lineEncoder.outputFormatting = [.sortedKeys]
        var sampleCount = 0
        var sampler = ProcessSampler()
        var lastFrames = sessions.map { $0.status.frame }
        var drops = DropTally()
        _ = drops.advance(sessions.map(\.status))
        // Per viewer: its totals at the last sample and the last of its seconds already used.
        var lastTotals = probes.map { _ in ProbeStats.Total() }
        var lastFidelity = probes.map { _ in (compared: 0, corrupt: 0, second: -1) }
        var lastSeconds = probes.map { _ -> Int? in nil }
        var lastTick = probes.map { _ in Int64.min }
        var av = AVTotals()
        var lastSampleTime = ProcessSampler.monotonic()
        var cpuSum = 0.0
        var rssAll: [UInt64] = []
        rssAll.reserveCapacity(min(config.keepSamples, Int(config.duration) + 2))
        var rssMax: UInt64 = 0
        let start = ProcessSampler.monotonic()
        var second = 0
        let wake = DispatchSemaphore(value: 0)
        while Double(second) < config.duration && !shouldStop() {
            second += 1
            if config.rotatesSample && second % max(1, Int(config.rotateEvery)) == 0 { rotate() }
            // Sample on whole seconds of the run, whatever the sampling itself cost.
            let due = start + Double(second)
            _ = wake.wait(timeout: .now() + max(0, due - ProcessSampler.monotonic()))
            let statuses = sessions.map(\.status)
            let frames = statuses.map(\.frame)
            // Counters can restart (an RTSP media replaced when its last viewer left): a fall counts from 0.
            func delta<T: BinaryInteger>(_ now: T, _ before: T) -> Int { now >= before ? Int(now - before) : Int(now) }
            var s = SoakReport.Sample(t: second, cpuPercent: sampler.cpuPercent(),
                                      rssBytes: ProcessSampler.residentBytes() ?? 0,
                                      framesRendered: zip(frames, lastFrames).reduce(0) { $0 + delta($1.0, $1.1) },
                                      sourceDropped: drops.advance(statuses),
                                      viewerDropped: 0, viewerRepeated: 0, unreadable: 0)
            lastFrames = frames
            // Counts are differences of each viewer's totals between samples (nothing counted twice or
            // skipped); latency is each viewer's newest finished second, used once.
            let now = ProcessSampler.monotonic()
            let interval = max(0.001, now - lastSampleTime)
            lastSampleTime = now
            var fps: [Double] = []
            var lat: [LatencySummary] = []
            for (j, p) in probes.enumerated() {
                let tick = p.tick()
                let t = tick.total, before = lastTotals[j]
                lastTotals[j] = t
                config.metrics?.update(labels[j], from: p, total: t, receiving: !p.ended && t.frames > before.frames)
                if t.frames > 0 { fps.append(Double(t.frames - before.frames) / interval) }
                s.viewerDropped += t.dropped - before.dropped
                s.viewerRepeated += t.repeated - before.repeated
                s.unreadable += t.unreadable - before.unreadable
                if let sec = tick.second, sec.second != lastSeconds[j] {
                    lastSeconds[j] = sec.second
                    if let l = sec.latencyMs { lat.append(l) }
                }
                if let f = p.fidelity {
                    s.compared = (s.compared ?? 0) + f.total.compared - lastFidelity[j].compared
                    s.corrupt = (s.corrupt ?? 0) + f.total.corrupt - lastFidelity[j].corrupt
                    // The newest second that is over (the one in progress may still gain frames).
                    if let sec = f.seconds.dropLast().last, sec.second != lastFidelity[j].second {
                        s.ssimMin = min(s.ssimMin ?? 1, sec.ssimMin)
                        lastFidelity[j].second = sec.second
                    }
                    lastFidelity[j].compared = f.total.compared
                    lastFidelity[j].corrupt = f.total.corrupt
                }
            }
            if config.av {
                var offsets: [Double] = []
                for (j, p) in probes.enumerated() {
                    let ticks = p.avTicks(after: lastTick[j])
                    if let last = ticks.last { lastTick[j] = last.second }
                    offsets += ticks.map(\.offsetMs)
                }
                s.avTicks = offsets.count
                s.avOffsetMin = offsets.min()
                s.avOffsetMax = offsets.max()
                for o in offsets { av.add(second: Double(second), offsetMs: o) }
            }
            s.viewerFpsMin = fps.min()
            s.viewerFpsMean = fps.isEmpty ? nil : fps.reduce(0, +) / Double(fps.count)
            s.latencyP50 = SoakReport.median(lat.map(\.p50))
            s.latencyP95 = lat.map(\.p95).max()
            s.latencyP99 = lat.map(\.p99).max()
            s.latencyMax = lat.map(\.max).max()
            cpuSum += s.cpuPercent
            renderedTotal += s.framesRendered
            sourceDroppedTotal += s.sourceDropped
            cpuSeconds += s.cpuPercent / 100 * interval
            config.metrics?.process(cpuSeconds: cpuSeconds, residentBytes: s.rssBytes,
                                    rendered: config.viewersOnly ? nil : (renderedTotal, sourceDroppedTotal))
            rssAll.append(s.rssBytes)
            rssMax = max(rssMax, s.rssBytes)
            sampleCount += 1
            if var line = try? lineEncoder.encode(s) {
                line.append(0x0A)
                samplesFile.write(line)
            }
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
        _ = drops.advance(streamStatus)
        for (j, p) in probes.enumerated() { config.metrics?.update(labels[j], from: p, total: viewerTotals[j], receiving: false) }
        stopAll()
        // The last figures stay served until Prometheus has read them once (a scrape interval, 15 s at most).
        if let metrics = config.metrics, !metrics.waitForScrape(timeout: 15) {
            log("soak: Prometheus did not read the last figures within 15 s (is it scraping this soak?)")
        }
        let fidelity = probes.map { $0.fidelity?.total }
        let lat = viewerTotals.compactMap(\.latencyMs)
        let totals = SoakReport.Totals(
            seconds: sampleCount,
            framesRendered: streamStatus.reduce(0) { $0 + $1.frame + 1 },
            sourceDropped: streamStatus.reduce(0) { $0 + DropTally.sourceDropped($1) },
            sourceLate: streamStatus.reduce(0) { $0 + $1.late },
            sourceEncoderDropped: streamStatus.reduce(0) { $0 + $1.encoderDropped },
            outputDropped: drops.outputsThatDropped,
            viewerFrames: viewerTotals.reduce(0) { $0 + $1.frames },
            viewerDropped: viewerTotals.reduce(0) { $0 + $1.dropped },
            viewerRepeated: viewerTotals.reduce(0) { $0 + $1.repeated },
            unreadable: viewerTotals.reduce(0) { $0 + $1.unreadable },
            decodeErrors: viewerTotals.reduce(0) { $0 + $1.decodeErrors },
            stalls: viewerTotals.reduce(0) { $0 + $1.stalls }, decodingViewers: config.decodingViewers,
            cpuPercentMean: sampleCount == 0 ? 0 : cpuSum / Double(sampleCount),
            rssStartBytes: rssAll.first ?? 0, rssEndBytes: rssAll.last ?? 0, rssMaxBytes: rssMax,
            rssGrowthBytes: SoakReport.rssGrowth(rssAll),
            latencyP50: SoakReport.median(lat.map(\.p50)), latencyP99: lat.map(\.p99).max(),
            latencyMax: lat.map(\.max).max(),
            compared: fidelity.reduce(0) { $0 + ($1?.compared ?? 0) },
            corrupt: fidelity.reduce(0) { $0 + ($1?.corrupt ?? 0) },
            ssimP1: fidelity.compactMap { $0?.ssimP1 }.min(),
            ssimMin: fidelity.compactMap { $0?.compared ?? 0 > 0 ? $0?.ssimMin : nil }.min(),
            avTicks: config.av ? av.count : nil, avOffsetMin: av.min, avOffsetMax: av.max, avOffsetMean: av.mean,
            avDriftMsPerHour: av.driftPerHour)
        let report = SoakReport(
            started: startedAt,
            config: .init(streams: config.viewersOnly ? config.viewersOf.count : config.streams, viewers: config.viewers, width: config.size.width,
                          height: config.size.height, fps: config.fps, duration: config.duration,
                          transport: config.transport.rawValue),
            totals: totals,
            streams: sessions.enumerated().map { i, s in
                .init(url: s.rtspURL ?? "", frames: streamStatus[i].frame + 1, dropped: DropTally.sourceDropped(streamStatus[i]),
                      viewers: (0..<config.viewers).filter { $0 % config.streams == i }.count)
            },
            viewers: probes.enumerated().map { j, p in
                .init(url: p.url, total: viewerTotals[j], fidelity: fidelity[j], error: probeErrors[j])
            },
            samples: Self.readSamples(samplesPath, keep: config.keepSamples))
        try write(report)
        return report
    }

    /// The newest `keep` samples written during the run.
    static func readSamples(_ path: String, keep: Int) -> [SoakReport.Sample] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        let decoder = JSONDecoder()
        let lines = data.split(separator: 0x0A)
        return lines.suffix(keep).compactMap { try? decoder.decode(SoakReport.Sample.self, from: Data($0)) }
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

/// The A/V offsets of a whole soak in constant memory: count, extremes, mean, and the sums of a least-squares line
/// through (second, offset) for the drift.
struct AVTotals {
    private(set) var count = 0
    private(set) var min: Double?
    private(set) var max: Double?
    private var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0

    mutating func add(second x: Double, offsetMs y: Double) {
        count += 1
        min = Swift.min(min ?? y, y)
        max = Swift.max(max ?? y, y)
        sx += x
        sy += y
        sxx += x * x
        sxy += x * y
    }

    var mean: Double? { count > 0 ? sy / Double(count) : nil }

    /// Milliseconds per hour; nil with fewer than two ticks or all at one second.
    var driftPerHour: Double? {
        let n = Double(count)
        let d = n * sxx - sx * sx
        guard count >= 2, d > 1e-9 else { return nil }
        return (n * sxy - sx * sy) / d * 3600
    }
}
