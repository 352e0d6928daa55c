import Foundation

/// Compares decoded frames with their reference pictures on a thread of its own, one frame at a time.
///
/// Live streams must not wait for it: while it is busy, newer frames are counted as skipped rather than
/// queued (one slot, never a growing queue). A file has no clock to keep up with, so `offer` waits for the slot
/// and every frame is compared.
///
/// `@unchecked Sendable`: the slot and the figures are behind `cond`; `reference` is used only on the comparing thread.
public final class ReferenceComparer: @unchecked Sendable {
    private struct Job {
        var luma: [UInt8]
        var width: Int
        var height: Int
        var reading: TimecodeCodec.Reading
        var second: Int
    }

    private let reference: ReferencePicture
    private let waitForSlot: Bool
    private let cond = NSCondition()
    private var slot: Job?
    private var busy = false
    private var stopped = false
    private var stats: FidelityStats
    private var errors: [String] = []
    /// Which scene frame the pictures show (a paused source's scene time stands behind the strip); comparing thread only.
    private var sceneFrames = SceneFrameTracker()
    private let corruptBelow: Double
    /// A decoded plane the comparing thread is done with, for the next frame offered (behind `cond`); and the
    /// reference plane (comparing thread only). Kept, not made again each frame: a 720p plane is mapped apart and
    /// faulted in afresh every time.
    private var spare: [UInt8]?
    private var referencePlane: [UInt8] = []

    public init(reference: ReferencePicture, corruptBelow: Double, waitForSlot: Bool, keepSeconds: Int = 86_400) {
        self.reference = reference
        self.waitForSlot = waitForSlot
        self.corruptBelow = corruptBelow
        stats = FidelityStats(corruptBelow: corruptBelow, keepSeconds: keepSeconds)
        let t = Thread { [self] in run() }
        t.name = "probe-reference"
        t.start()
    }

    /// Offers a decoded frame; `copy` fills a `width*height` luma plane and is called only when the frame will
    /// be compared.
    public func offer(reading: TimecodeCodec.Reading, width: Int, height: Int, second: Int,
                      copy: (UnsafeMutableBufferPointer<UInt8>) -> Void) {
        cond.lock()
        defer { cond.unlock() }
        if waitForSlot { while (slot != nil || busy) && !stopped { cond.wait() } }
        guard !stopped else { return }
        guard slot == nil && !busy else {
            stats.skipped()
            return
        }
        var plane = spare.flatMap { $0.count == width * height ? $0 : nil } ?? [UInt8](repeating: 0, count: width * height)
        spare = nil
        plane.withUnsafeMutableBufferPointer { copy($0) }
        slot = Job(luma: plane, width: width, height: height, reading: reading, second: second)
        cond.broadcast()
    }

    /// A decoded picture whose strip did not read: it cannot be compared, and is counted.
    public func unreadable() { cond.withLock { stats.unreadable() } }

    private func run() {
        while true {
            cond.lock()
            while slot == nil && !stopped { cond.wait() }
            guard !stopped, var job = slot else { cond.unlock(); return }
            slot = nil
            busy = true
            cond.unlock()
            let result: Result<Similarity, Error> = Result { try compare(job) }
            cond.lock()
            switch result {
            case .success(let s):
                stats.record(second: job.second, frame: job.reading.frame, s)
                if sceneFrames.last != nil { stats.sceneBehind(sceneFrames.behind) }
            case .failure(let e): if errors.count < 5 { errors.append("frame \(job.reading.frame): \(e)") }
            }
            busy = false
            // Handed over, not shared: the next offer writes into it without a copy.
            spare = job.luma
            job.luma = []
            cond.broadcast()
            cond.unlock()
        }
    }

    /// The picture compared with the scene frames it may show (`SceneFrameTracker`), likeliest first: the first
    /// that matches, or the closest when none does (then it is corrupt).
    private func compare(_ job: Job) throws -> Similarity {
        var best: Similarity?
        for scene in sceneFrames.candidates(for: job.reading.frame) {
            try reference.luma(for: job.reading, scene: scene, decoded: job.luma, width: job.width, height: job.height,
                               into: &referencePlane)
            let s = Similarity.compare(job.luma, referencePlane, width: job.width, height: job.height)
            if s.worstRegionSSIM >= corruptBelow {
                sceneFrames.matched(frame: job.reading.frame, scene: scene)
                return s
            }
            if best.map({ s.worstRegionSSIM > $0.worstRegionSSIM }) ?? true { best = s }
        }
        return best!
    }

    /// Waits for the frame in hand (a file's last frame), then stops the thread.
    public func finish() {
        cond.lock()
        while (slot != nil || busy) && !stopped { cond.wait() }
        stopped = true
        cond.broadcast()
        cond.unlock()
    }

    public var figures: (total: FidelityStats.Total, seconds: [FidelityStats.Second], errors: [String]) {
        cond.withLock { (stats.total, stats.seconds, errors) }
    }

    /// The totals and the SSIM buckets so far, without the seconds (what an exporter reads each second).
    public var running: (total: FidelityStats.Total, ssim: BucketCounts) {
        cond.withLock { (stats.total, stats.ssimBuckets) }
    }
}
