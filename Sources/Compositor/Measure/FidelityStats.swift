import Foundation

/// How close the decoded pictures came to the pictures the source drew, frame by frame, turned into
/// per-second and whole-run figures. Pure bookkeeping, like `ProbeStats`: the caller compares and says which
/// second each frame fell in.
///
/// A frame is *corrupt* when the SSIM of its worst region (one of 4x4) falls below `corruptBelow`: encoding at an
/// ordinary bitrate keeps every region of text and flat scenes near 0.98–1.0; a picture split in two, a smeared
/// or concealed slice, or content from the wrong frame falls far below, even when the rest of the picture is
/// right.
public struct FidelityStats: Sendable {
    public struct Frame: Codable, Sendable, Equatable {
        public var frame: UInt64
        public var ssim: Double
        public var psnr: Double
        /// x, y, width, height of the worst region of the picture, and its SSIM.
        public var worstRegion: [Int]
        public var worstRegionSSIM: Double
    }

    public struct Second: Codable, Sendable, Equatable {
        public var second: Int
        public var compared = 0
        public var corrupt = 0
        public var ssimMean = 0.0
        public var ssimMin = 1.0
        public var psnrMin = 100.0
    }

    public struct Total: Codable, Sendable, Equatable {
        /// Frames compared with the reference, and frames left out because the comparer was still busy with
        /// an earlier one (the probe keeps up with the stream; it compares as many frames as it can).
        public var compared = 0
        public var skipped = 0
        public var corrupt = 0
        /// Decoded pictures whose timecode strip could not be read, so which frame they show is unknown: on a
        /// source that has a strip, damaged pictures too (counted with `corrupt` by `--max-corrupt`).
        public var unreadable = 0
        public var corruptBelow: Double
        public var ssimMean = 0.0
        public var ssimMin = 1.0
        public var psnrMean = 0.0
        public var psnrMin = 100.0
        /// Percentiles over the compared frames (1 % of frames were at or below p1), to 0.0001 SSIM and 0.1 dB.
        public var ssimP1: Double?
        public var ssimP50: Double?
        public var psnrP1: Double?
        public var psnrP50: Double?
        /// The frames with the worst regions, worst first.
        public var worst: [Frame] = []
        /// How many frames the source's scene time stood behind its strip at the last picture that matched (the
        /// frames its pauses held it: `SceneFrameTracker`); nil until a picture matched.
        public var sceneFramesBehind: UInt64?
    }

    public private(set) var total: Total
    public private(set) var seconds: [Second] = []
    public let keepWorst: Int
    /// Finished seconds kept (the totals keep everything): a soak needs only the last few.
    public let keepSeconds: Int
    private var ssimSum = 0.0
    private var psnrSum = 0.0
    private var secondSums: [Int: Double] = [:]
    /// SSIM × 1000 and PSNR in dB, in the latency histogram's 0.1 bins: bounded memory for a run of any length.
    private var ssimHistogram = LatencyHistogram()
    private var psnrHistogram = LatencyHistogram()
    /// Every compared frame's SSIM in the buckets every probe exports (`ProbeBuckets.ssim`).
    public private(set) var ssimBuckets = BucketCounts(bounds: ProbeBuckets.ssim)

    public init(corruptBelow: Double = 0.9, keepWorst: Int = 5, keepSeconds: Int = 86_400) {
        total = Total(corruptBelow: corruptBelow)
        self.keepWorst = keepWorst
        self.keepSeconds = max(1, keepSeconds)
    }

    public mutating func skipped() { total.skipped += 1 }
    public mutating func sceneBehind(_ frames: UInt64) { total.sceneFramesBehind = frames }
    public mutating func unreadable() { total.unreadable += 1 }

    /// One compared frame, decoded during `second` (seconds since the probe's first frame).
    public mutating func record(second: Int, frame: UInt64, _ s: Similarity) {
        let isCorrupt = s.worstRegionSSIM < total.corruptBelow
        total.compared += 1
        if isCorrupt { total.corrupt += 1 }
        ssimSum += s.ssim
        psnrSum += s.psnr
        total.ssimMean = ssimSum / Double(total.compared)
        total.psnrMean = psnrSum / Double(total.compared)
        total.ssimMin = min(total.ssimMin, s.ssim)
        total.psnrMin = min(total.psnrMin, s.psnr)
        ssimHistogram.add(s.ssim * 1000)
        ssimBuckets.observe(s.ssim)
        psnrHistogram.add(s.psnr)
        total.ssimP1 = ssimHistogram.percentile(0.01).map { $0 / 1000 }
        total.ssimP50 = ssimHistogram.percentile(0.5).map { $0 / 1000 }
        total.psnrP1 = psnrHistogram.percentile(0.01)
        total.psnrP50 = psnrHistogram.percentile(0.5)
        let entry = Frame(frame: frame, ssim: s.ssim, psnr: s.psnr, worstRegion: s.worstRegion,
                          worstRegionSSIM: s.worstRegionSSIM)
        if total.worst.count < keepWorst || s.worstRegionSSIM < total.worst.last!.worstRegionSSIM {
            total.worst.append(entry)
            total.worst.sort { $0.worstRegionSSIM < $1.worstRegionSSIM }
            if total.worst.count > keepWorst { total.worst.removeLast() }
        }
        // Frames are compared in order, so a second only ever gains frames at the end of the list.
        if seconds.last?.second != second {
            seconds.append(Second(second: second))
            if seconds.count > keepSeconds { seconds.removeFirst(seconds.count - keepSeconds) }
        }
        var sec = seconds[seconds.count - 1]
        sec.compared += 1
        if isCorrupt { sec.corrupt += 1 }
        secondSums[second, default: 0] += s.ssim
        sec.ssimMean = secondSums[second]! / Double(sec.compared)
        sec.ssimMin = min(sec.ssimMin, s.ssim)
        sec.psnrMin = min(sec.psnrMin, s.psnr)
        seconds[seconds.count - 1] = sec
        if secondSums.count > 4 { secondSums = secondSums.filter { $0.key >= second - 1 } }
    }
}
