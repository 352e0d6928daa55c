import Foundation

/// What the session knows of resizes asked for and not yet applied: when each was asked (to time it to the live
/// encoder's first frame of the new size), and the fixed-size encoders made ahead for it, by the size they letterbox
/// into and the render size they take. The frame that applies a resize takes such an encoder instead of building a
/// pipeline on the frame loop's thread. One still being made when that frame comes is given up (it is ended once
/// made), and the frame makes its own, as it did before encoders were made ahead.
///
/// `@unchecked Sendable`: `entries` and `askedAt` are behind `lock`, held only to look up or change them.
final class PendingResizes: @unchecked Sendable {
    private struct Key: Hashable {
        let fixed: PixelSize
        let liveSize: PixelSize
    }
    /// nil: being made.
    private var entries: [Key: Encoder?] = [:]
    private var askedAt: [PixelSize: Date] = [:]
    private let lock = NSLock()

    /// A resize to `size` was asked for now.
    func asked(_ size: PixelSize) { lock.withLock { askedAt[size] = Date() } }

    /// The live encoder made its first frame of `size`: when that resize was asked for, if it was (once).
    func encoded(_ size: PixelSize) -> Date? { lock.withLock { askedAt.removeValue(forKey: size) } }

    /// Claims the making of one; false when one is made or being made already.
    func reserve(fixed: PixelSize, liveSize: PixelSize) -> Bool {
        lock.withLock {
            let key = Key(fixed: fixed, liveSize: liveSize)
            guard entries[key] == nil else { return false }
            entries[key] = .some(nil)
            return true
        }
    }

    /// Hands over one made; false when it is no longer wanted (then the caller ends it).
    func put(_ encoder: Encoder, fixed: PixelSize, liveSize: PixelSize) -> Bool {
        lock.withLock {
            let key = Key(fixed: fixed, liveSize: liveSize)
            guard case .some(.none) = entries[key] else { return false }
            entries[key] = .some(encoder)
            return true
        }
    }

    /// The making failed.
    func cancel(fixed: PixelSize, liveSize: PixelSize) {
        _ = lock.withLock { entries.removeValue(forKey: Key(fixed: fixed, liveSize: liveSize)) }
    }

    /// The one made for this resize, if it is ready; one still being made is given up.
    func take(fixed: PixelSize, liveSize: PixelSize) -> Encoder? {
        lock.withLock { entries.removeValue(forKey: Key(fixed: fixed, liveSize: liveSize)) ?? nil }
    }

    /// Those made for any other render size than `liveSize` (resizes that did not come): to be ended.
    func discard(besides liveSize: PixelSize) -> [Encoder] {
        lock.withLock {
            let stale = entries.filter { $0.key.liveSize != liveSize }
            for key in stale.keys { entries.removeValue(forKey: key) }
            return stale.values.compactMap { $0 }
        }
    }

    /// The encoders made and waiting to be taken.
    var ready: [Encoder] { lock.withLock { entries.values.compactMap { $0 } } }

    /// Every one made: the run ends.
    func discardAll() -> [Encoder] {
        lock.withLock {
            defer { entries = [:] }
            return entries.values.compactMap { $0 }
        }
    }
}
