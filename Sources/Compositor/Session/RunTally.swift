import Foundation

/// What a run keeps for status and the end-of-run summary: when it began, every output that ran (in the order they
/// started), the frames dropped at encoders that have stopped, and the live encoder's last figures once it is gone.
///
/// Outputs that ended for good are kept one by one only as the newest `keptEnded` of them: older ones are folded into
/// `earlier`, one set of counts. A run that splits its recording at every resize, or starts and stops recordings all
/// day, would otherwise keep every part it ever wrote (its object, its status entry, its metric series, and a thread
/// to finish it at the run's end).
///
/// `@unchecked Sendable`: every field is behind `lock`, held only to copy or add.
final class RunTally: @unchecked Sendable {
    /// How many of the outputs that ended are kept one by one: the newest.
    static let keptEnded = 16

    struct Snapshot {
        var ran: [any PlacedOutput] = []
        /// Outputs folded out of `ran`, as one set of counts.
        var earlier = LiveSession.Status.Earlier()
        /// Frames dropped at encoders that have stopped (fixed encoders after a resize back, all at the end).
        var retiredDrops: UInt64 = 0
        /// Frames the live encoder produced, and how long `--inject-delay-ms` held them, once it is gone.
        var finalEncoded: UInt64 = 0
        var finalDelayHeld: LatencySummary?
        /// Outputs whose end did not come out in time at the end of the run (or that were left behind, stuck).
        var unfinished: [String] = []
    }

    let began = Date()
    private let lock = NSLock()
    private var kept = Snapshot()

    /// Folds what ended first, so what status shows is bounded however long the run.
    var snapshot: Snapshot {
        foldEnded()
        return lock.withLock { kept }
    }
    var ran: [any PlacedOutput] { lock.withLock { kept.ran } }
    /// Outputs started so far, folded ones included: what numbers a user's pipeline (`pipeline:NAME#N`).
    var startedCount: Int { lock.withLock { kept.ran.count + kept.earlier.outputs } }

    /// Adds `outputs`, then folds what ended beyond the newest `keptEnded`.
    func started(_ outputs: [any PlacedOutput]) {
        lock.withLock { kept.ran += outputs }
        foldEnded()
    }

    /// Moves the outputs that ended, all but the newest `keptEnded` of them, into `earlier`. Whether each ended and
    /// its counts are asked outside `lock` (each output takes its own lock, which a write may hold a while); one
    /// that a call beside this one folded meanwhile is not counted twice.
    private func foldEnded() {
        let over = ran.filter(\.hasEnded).dropLast(Self.keptEnded)
        guard !over.isEmpty else { return }
        let counts = over.map { (ObjectIdentifier($0), LiveSession.Status.Earlier($0)) }
        lock.withLock {
            for (id, one) in counts {
                guard let at = kept.ran.firstIndex(where: { ObjectIdentifier($0) == id }) else { continue }
                kept.ran.remove(at: at)
                kept.earlier.add(one)
            }
        }
    }

    func unfinished(_ ids: [String]) { lock.withLock { kept.unfinished = ids } }

    func retired(_ e: Encoder) { lock.withLock { kept.retiredDrops += e.droppedFrames + e.delayDropped } }

    /// The run ends: the live encoder's last figures, and the drops of every encoder drained.
    func ended(live: Encoder, encoders: [Encoder]) {
        lock.withLock {
            kept.finalEncoded = live.encodedFrames
            kept.finalDelayHeld = live.delayHeld
            kept.retiredDrops += encoders.reduce(0) { $0 + $1.droppedFrames + $1.delayDropped }
        }
    }
}
