import Foundation

/// Writes an HLS ladder's multivariant playlist, `DIR/master.m3u8`, and keeps it true: each rung's BANDWIDTH is the
/// peak bit rate of its segments as RFC 8216 defines it (a segment's size over its duration, the largest seen),
/// AVERAGE-BANDWIDTH their average, RESOLUTION and CODECS what its encoder makes now (the main rung follows a
/// resize). Before a rung has a segment, its bitrate setting (plus the sound's) stands in. Rewritten whole, by
/// rename, once a second when it changed, so a player never reads half a playlist.
///
/// An `Output` of the run like the rungs: opened as the frames start, ended after them (its last writing is final).
/// It takes no frames itself; what it counts is what it wrote.
///
/// `@unchecked Sendable`: the figures are only touched on `queue`.
final class HLSMaster: Output, @unchecked Sendable {
    struct Rung {
        let name: String
        let output: PipelineOutput
        /// The size and bitrate (kbit/s) it was set up with.
        let size: PixelSize
        let kbps: Int
    }

    private let folder: String
    private let rungs: [Rung]
    private let fps: Int
    private let audioKbps: Int?
    private let queue = DispatchQueue(label: "hls-master")
    private let ticks = RepeatingJob(label: "hls-master-tick", every: 1)
    /// Between `start()` and `stop()`; only touched on `queue`.
    private var writing = false
    /// Per rung, its segments' peak and average bit rates.
    private var measured: [String: SegmentRates] = [:]
    private var written = ""
    private let log: @Sendable (String) -> Void

    init(folder: String, rungs: [Rung], fps: Int, audioKbps: Int?, log: @escaping @Sendable (String) -> Void) {
        self.folder = folder
        self.rungs = rungs
        self.fps = fps
        self.audioKbps = audioKbps
        self.log = log
    }

    var path: String { folder + "/master.m3u8" }

    var id: String { "hls:" + path }
    var stateText: String { queue.sync { writing ? "writing" : "written" } }
    /// Times the playlist was written, and its size now.
    var delivered: UInt64 { queue.sync { writes } }
    var dropped: UInt64 { 0 }
    var bytes: UInt64 { queue.sync { UInt64(written.utf8.count) } }
    private var writes: UInt64 = 0

    func open() { start() }
    func feed(from encoder: Encoder) {}
    func hear(_ track: AudioTrack) {}
    func finish(timeout: TimeInterval) -> OutputEnding {
        stop()
        return .finalized
    }

    /// Writes the playlist now (estimates) and then once a second.
    func start() {
        let first = queue.sync { () -> Bool in
            defer { writing = true }
            update()
            return !writing
        }
        guard first else { return }
        ticks.start { [weak self] in self?.queue.sync { self?.update() } }
    }

    /// Stops the updates after a last one (the rungs' playlists are final by then).
    func stop() {
        ticks.stop()
        // A tick already under way runs before or after this one, on `queue`.
        queue.sync {
            writing = false
            update()
        }
    }

    private func update() {
        var variants: [HLSPlaylist.Variant] = []
        for rung in rungs {
            let (bandwidth, average) = measure(rung)
            let caps = rung.output.videoCaps
            let size = caps?.videoSize ?? rung.size
            let video = caps.flatMap { c in
                c.string("profile").flatMap { p in c.string("level").flatMap { HLSPlaylist.avc1(profile: p, level: $0) } }
            } ?? "avc1.42C01F"
            let codecs = audioKbps == nil ? video : video + ",mp4a.40.2"
            variants.append(HLSPlaylist.Variant(uri: rung.name + "/index.m3u8", bandwidth: bandwidth, averageBandwidth: average,
                                                size: size, codecs: codecs, frameRate: Double(fps)))
        }
        let text = HLSPlaylist.master(variants)
        guard text != written else { return }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            written = text
            writes += 1
        } catch {
            log("hls: cannot write \(path): \(error)")
        }
    }

    /// BANDWIDTH and AVERAGE-BANDWIDTH of a rung: from its segments once it has some, else its settings plus a tenth.
    private func measure(_ rung: Rung) -> (Int, Int?) {
        var rates = measured[rung.name] ?? SegmentRates()
        if let text = try? String(contentsOfFile: folder + "/" + rung.name + "/index.m3u8", encoding: .utf8) {
            rates.update(listed: HLSPlaylist.media(text).segments) { uri in
                ((try? FileManager.default.attributesOfItem(atPath: folder + "/" + rung.name + "/" + uri))?[.size] as? NSNumber)?
                    .doubleValue
            }
        }
        measured[rung.name] = rates
        guard let top = rates.peak, let average = rates.average else {
            let estimate = Double((rung.kbps + (audioKbps ?? 0)) * 1000) * 1.1
            return (Int(estimate.rounded(.up)), nil)
        }
        return (Int(top.rounded(.up)), Int(average.rounded(.up)))
    }
}
