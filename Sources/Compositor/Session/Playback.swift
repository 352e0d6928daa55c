import Foundation

/// Scene time under play, pause and skip: the PiP playback delegate.
///
/// Scene time runs with the frame clock while playing and stands still while paused (animations freeze,
/// frames keep flowing). A live scene has an infinite time range and refuses skips; a finite one skips within
/// [0, duration] and ends there.
///
/// `@unchecked Sendable`: the play state and time base are behind `lock`; `timeline` is constant.
public final class Playback: @unchecked Sendable {
    public enum Refusal: Error, CustomStringConvertible {
        case live
        public var description: String {
            "this scene is live (infinite time range): skipping is not possible; give the scene "
                + "'timeline: {duration: SECONDS}' to make it skippable"
        }
    }

    public let timeline: Scene.Timeline
    private let lock = NSLock()
    /// Scene time at running time `anchor`.
    private var base = 0.0
    private var anchor = 0.0
    private var _paused = false

    public init(timeline: Scene.Timeline) { self.timeline = timeline }

    public var isPaused: Bool { lock.withLock { _paused } }

    public var duration: Double? {
        if case .finite(let d) = timeline { return d }
        return nil
    }

    /// Scene time at running time `running` (seconds).
    public func media(at running: Double) -> Double {
        lock.withLock { clamp(_paused ? base : base + (running - anchor)) }
    }

    private func clamp(_ t: Double) -> Double {
        guard let d = duration else { return max(0, t) }
        return min(max(0, t), d)
    }

    /// Pauses at running time `running`; false when already paused.
    @discardableResult
    public func pause(at running: Double) -> Bool {
        lock.withLock {
            guard !_paused else { return false }
            base = clamp(base + (running - anchor))
            anchor = running
            _paused = true
            return true
        }
    }

    /// Plays from where it stands, without a jump; false when already playing.
    @discardableResult
    public func play(at running: Double) -> Bool {
        lock.withLock {
            guard _paused else { return false }
            anchor = running
            _paused = false
            return true
        }
    }

    /// Moves scene time by `seconds` (clamped to the timeline); returns the new scene time.
    public func skip(by seconds: Double, at running: Double) throws(Refusal) -> Double {
        guard duration != nil else { throw .live }
        return lock.withLock {
            let now = _paused ? base : base + (running - anchor)
            base = clamp(now + seconds)
            anchor = running
            return base
        }
    }

    /// True once a finite scene has reached its end.
    public func ended(at running: Double) -> Bool {
        guard let d = duration else { return false }
        return media(at: running) >= d - 1e-9
    }
}
