import Foundation

/// Renditions made while running for browsers that follow their windows (`--max-renditions`): each is drawn by
/// its own renderer at the window's size (the layout that size gets) and encoded by its own encoder, from the moment
/// a browser asks for it until no browser sees it any more; then it is dropped (its encoder drained) and costs
/// nothing. The frame loop draws it (`FrameLoop.adopt`/`retire`); the WebRTC output shows it to viewers.
///
/// `@unchecked Sendable`: `made` and `dropping` are behind `lock`; making and dropping run one at a time on the
/// callers' threads under `work`.
final class BrowserRenditions: @unchecked Sendable {
    let limit: Int
    private let lock = NSLock()
    /// Serializes making and dropping (a size asked for again while it is being dropped waits for the drop).
    private let work = NSLock()
    private var made: [PixelSize: Encoder] = [:]
    private var dropping: Set<PixelSize> = []
    private let dropped = NSCondition()
    /// Frames its encoders dropped, of renditions dropped since.
    private(set) var retiredDrops: UInt64 = 0

    init(limit: Int) {
        self.limit = limit
    }

    /// The renditions made now, with their encoders.
    var encoders: [PixelSize: Encoder] { lock.withLock { made } }
    var count: Int { lock.withLock { made.count } }

    /// The encoder of the rendition of `size` when one is made, waiting (at most 5 s) for a drop of that size to end.
    func existing(_ size: PixelSize) -> Encoder? {
        dropped.lock()
        let deadline = Date().addingTimeInterval(5)
        while lock.withLock({ dropping.contains(size) }) && dropped.wait(until: deadline) {}
        dropped.unlock()
        return lock.withLock { made[size] }
    }

    /// Makes the rendition of `size` with `make` unless it exists, then calls `use` (which shows it to a viewer)
    /// before it can be dropped; nil when the limit is reached: `limit` of those made now are wanted by others
    /// (`othersWant`: the sizes other viewers see or wait for). The rest are on their way out (a window's own, left
    /// for its new size) and do not count.
    func make(_ size: PixelSize, othersWant: Set<PixelSize>, with make: () throws -> Encoder,
              then use: () throws -> Void) throws -> (encoder: Encoder, new: Bool)? {
        work.lock()
        defer { work.unlock() }
        if let e = existing(size) {
            try use()
            return (e, false)
        }
        guard lock.withLock({ made.keys.filter { othersWant.contains($0) }.count }) < limit else { return nil }
        let e = try make()
        lock.withLock { made[size] = e }
        try use()
        return (e, true)
    }

    /// Drops the rendition of `size` unless `stillWanted` says a viewer came back to it meanwhile: `takeAway` hides
    /// it from viewers and the frame loop stops drawing it (`retire` calls its argument once it is out); its encoder
    /// is then drained off the loop's thread. Returns false when there was nothing to drop.
    @discardableResult
    func drop(_ size: PixelSize, stillWanted: () -> Bool, takeAway: () -> Void,
              retire: (@escaping () -> Void) -> Void, done: @escaping @Sendable () -> Void) -> Bool {
        work.lock()
        defer { work.unlock() }
        guard !stillWanted(), let encoder = lock.withLock({ made.removeValue(forKey: size) }) else { return false }
        lock.withLock { _ = dropping.insert(size) }
        takeAway()
        retire { [self] in
            DispatchQueue.global().async { [self] in
                _ = encoder.finish(timeout: 2)
                lock.withLock {
                    retiredDrops += encoder.droppedFrames
                    _ = dropping.remove(size)
                }
                dropped.lock()
                dropped.broadcast()
                dropped.unlock()
                done()
            }
        }
        return true
    }
}
