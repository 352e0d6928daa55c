import Foundation

/// What `pipcompose probe --json` prints: the run's totals and every second.
public struct ProbeReport: Codable, Sendable {
    public var url: String
    public var transport: String?
    public var live: Bool
    /// False when no frame's timecode strip could be read: latency and drops are then unknown.
    public var timecode: Bool
    public var total: ProbeStats.Total
    public var seconds: [ProbeStats.Second]
    /// Picture fidelity against the source's scene (`--reference`), with its own per-second figures.
    public var fidelity: Fidelity?
    /// Thresholds crossed (empty when none were given or all held).
    public var failures: [String]
    /// The sound's ticks against the picture (nil when the stream had no sound).
    public var av: AVSyncStats.Report?

    public struct Fidelity: Codable, Sendable {
        public var scene: String
        public var total: FidelityStats.Total
        public var seconds: [FidelityStats.Second]
        public var errors: [String]
        /// Widgets whose boxes were left out (web pages, video layers: their pixels cannot be known from the scene).
        public var excluded: [String]
        public init(scene: String, total: FidelityStats.Total, seconds: [FidelityStats.Second], errors: [String],
                    excluded: [String] = []) {
            self.scene = scene
            self.total = total
            self.seconds = seconds
            self.errors = errors
            self.excluded = excluded
        }
    }

    public init(url: String, transport: String?, live: Bool, total: ProbeStats.Total, seconds: [ProbeStats.Second],
                fidelity: Fidelity? = nil, failures: [String] = []) {
        self.url = url
        self.transport = transport
        self.live = live
        timecode = total.readable > 0
        self.total = total
        self.seconds = seconds
        self.fidelity = fidelity
        self.failures = failures
    }

    public func json() -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: (try? e.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The figures for a person, a few lines.
    public var text: String {
        let t = total
        var lines = ["\(url)\(transport.map { " (\($0))" } ?? ""): \(String(format: "%.1f", t.seconds)) s, "
                     + "\(t.frames) frames, \(String(format: "%.2f", t.fps)) fps"]
        if let l = t.latencyMs {
            lines.append(String(format: "latency ms: min %.1f  p50 %.1f  p95 %.1f  p99 %.1f  max %.1f  mean %.2f  (%d frames; "
                                + "first frame %.0f; joined in %.0f)", l.min, l.p50, l.p95, l.p99, l.max, l.mean, l.samples,
                                t.firstFrameLatencyMs ?? 0, t.joinMs ?? 0))
        } else if !live && timecode {
            lines.append("latency: not measured (a recording's frames were drawn before it was opened)")
        }
        if timecode {
            lines.append("frames \(t.firstFrame ?? 0)…\(t.lastFrame ?? 0): dropped \(t.dropped), repeated \(t.repeated) "
                         + "(\(t.freezes) freezes, longest \(t.longestFreezeFrames)), unreadable \(t.unreadable), "
                         + "backwards \(t.backwards)")
        } else if t.frames > 0 {
            lines.append("no timecode strip in \(t.frames) frames: latency and drops cannot be measured "
                         + "(add a `timecode` widget to the source's scene, see docs/TIMECODE.md)")
        }
        lines.append("decode errors \(t.decodeErrors), sizes \(t.sizes.joined(separator: ", ")) "
                     + "(\(t.resolutionChanges) changes)")
        if let f = fidelity?.total {
            lines.append("picture vs \(fidelity!.scene): " + String(format: "%d frames compared (%d skipped while busy), "
                                + "SSIM p1 %.4f p50 %.4f min %.4f, PSNR p1 %.1f p50 %.1f min %.1f dB, "
                                + "corrupt (a region's SSIM < %.2f) %d, strip unreadable %d",
                                f.compared, f.skipped, f.ssimP1 ?? 0, f.ssimP50 ?? 0, f.ssimMin, f.psnrP1 ?? 0,
                                f.psnrP50 ?? 0, f.psnrMin,
                                f.corruptBelow, f.corrupt, f.unreadable))
            for w in f.worst.prefix(3) where w.worstRegionSSIM < f.corruptBelow {
                let region = w.worstRegion.map(String.init).joined(separator: ",")
                lines.append("  frame \(w.frame): " + String(format: "SSIM %.4f, PSNR %.1f dB, ", w.ssim, w.psnr)
                             + "worst region x,y,w,h \(region) " + String(format: "(SSIM %.4f)", w.worstRegionSSIM))
            }
            if !fidelity!.excluded.isEmpty {
                lines.append("  left out of the comparison (web and video widgets, whose pixels the scene does not "
                             + "know): \(fidelity!.excluded.joined(separator: ", "))")
            }
            lines += fidelity!.errors.map { "reference: \($0)" }
        } else if fidelity != nil {
            lines.append("picture: no frame compared (no readable timecode strip)")
        }
        if let av {
            if let o = av.offsetMs {
                lines.append(String(format: "A/V offset ms (sound − picture; positive: sound late): p50 %+.2f  p1 %+.2f  "
                                    + "p99 %+.2f  min %+.2f  max %+.2f  (%d ticks)", o.p50, o.p1, o.p99, o.min, o.max, av.ticks)
                             + (av.driftMsPerHour.map { String(format: ", drift %+.2f ms/h", $0) } ?? ""))
                lines.append(String(format: "sound: %.1f s heard, ", av.heardSeconds) + "\(av.missingTicks) ticks missing, \(av.strayOnsets) stray onsets, \(av.gaps) gaps "
                             + String(format: "(%.1f ms)", av.gapMs) + ", \(av.beforeAlignment) ticks before the receiver "
                             + "aligned the tracks (left out), \(av.jumps) jumps later"
                             + (av.jumps > 0 ? String(format: " (largest %.1f ms)", av.largestJumpMs) : ""))
            } else if !av.decoded {
                lines.append("sound: none in this stream, A/V offset not measured (run the source with --audio ticks)")
            } else {
                lines.append(String(format: "sound: %.1f s heard, ", av.heardSeconds) + "no ticks found, A/V offset not measured (run the source with --audio ticks and a "
                             + "timecode widget); \(av.gaps) gaps" + String(format: " (%.1f ms)", av.gapMs))
            }
        }
        lines += failures.map { "FAILED: \($0)" }
        return lines.joined(separator: "\n")
    }

    /// Checks the thresholds; each crossed one is named.
    public static func failures(_ t: ProbeStats.Total, live: Bool, maxLatencyMs: Double?, maxDrops: Int?,
                                fidelity: FidelityStats.Total? = nil, maxCorrupt: Int? = nil) -> [String] {
        var out: [String] = []
        if let maxCorrupt, let fidelity {
            let damaged = fidelity.corrupt + fidelity.unreadable
            if fidelity.compared == 0 && damaged == 0 {
                out.append("no frame compared with the reference with --max-corrupt set")
            } else if damaged > maxCorrupt {
                out.append(String(format: "%d damaged frames (%d corrupt: a region's SSIM < %.2f; %d with an unreadable "
                                  + "strip) > --max-corrupt %d", damaged, fidelity.corrupt, fidelity.corruptBelow,
                                  fidelity.unreadable, maxCorrupt))
            }
        }
        if let maxLatencyMs {
            if let p99 = t.latencyMs?.p99 {
                if p99 > maxLatencyMs { out.append(String(format: "latency p99 %.1f ms > --max-latency-ms %g", p99, maxLatencyMs)) }
            } else if !live {
                out.append("latency is not measured on a recording, yet --max-latency-ms was set")
            } else if t.readable == 0 {
                out.append("latency unknown (no timecode strip read) with --max-latency-ms set")
            } else {
                out.append("latency unknown: every readable frame came within the --warmup, or repeated")
            }
        }
        if let maxDrops {
            if t.readable == 0 { out.append("drops unknown (no timecode strip read) with --max-drops set") }
            else if t.dropped > maxDrops { out.append("dropped \(t.dropped) frames > --max-drops \(maxDrops)") }
        }
        return out
    }
}
