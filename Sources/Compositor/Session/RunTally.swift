import Foundation

/// What a run keeps for status and the end-of-run summary: when it began, every output that ran (in the order they
/// started), the frames dropped at encoders that have stopped, and the live encoder's last figures once it is gone.
///
/// `@unchecked Sendable`: every field is behind `lock`, held only to copy or add.
final class RunTally: @unchecked Sendable {
    struct Snapshot {
        var ran: [any PlacedOutput] = []
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

    var snapshot: Snapshot { lock.withLock { kept } }
    var ran: [any PlacedOutput] { lock.withLock { kept.ran } }

    func started(_ outputs: [any PlacedOutput]) { lock.withLock { kept.ran += outputs } }

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
