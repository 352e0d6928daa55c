import Foundation

/// Scene time under play, pause and skip: the PiP playback delegate.
///
/// Scene time runs with the frame clock while playing and stands still while paused (animations freeze,
/// frames keep flowing). A live scene has an infinite time range and refuses skips; a finite one skips within
/// [0, duration] and ends there.
///
/// Kept on the frame grid: a pause, a play and a skip take effect at a whole frame, so scene time is always a
/// whole number of frames ÷ fps, computed as a reference drawing computes it. A probe comparing pictures with
/// the scene (`--reference`) can then follow a pause as a constant count of frames behind the strip's number
/// (`SceneFrameTracker`).
///
/// `@unchecked Sendable`: the play state and time base are behind `lock`; `timeline` and `fps` are constant.
public final class Playback: @unchecked Sendable {
    public enum Refusal: Error, CustomStringConvertible {
        case live
        public var description: String {
            "this scene is live (infinite time range): skipping is not possible; give the scene "
                + "'timeline: {duration: SECONDS}' to make it skippable"
        }
    }

    public let timeline: Scene.Timeline
    public let fps: Int
    private let lock = NSLock()
    /// Scene time in frames at frame `anchor`.
    private var base: Int64 = 0
    private var anchor: Int64 = 0
    private var _paused = false

    public init(timeline: Scene.Timeline, fps: Int) {
        self.timeline = timeline
        self.fps = max(1, fps)
    }

    public var isPaused: Bool { lock.withLock { _paused } }

    public var duration: Double? {
        if case .finite(let d) = timeline { return d }
        return nil
    }

    /// The first frame at or after running time `running` (seconds): where a change asked for then takes effect.
    public func frame(at running: Double) -> Int64 {
        Int64((running * Double(fps) - 1e-6).rounded(.up))
    }

    /// Scene time of frame `n`, in seconds: Double(scene frames) ÷ fps, as `ReferencePicture` computes it.
    public func media(frame n: Int64) -> Double {
        lock.withLock { clamp(Double(sceneFrame(n)) / Double(fps)) }
    }

    /// Scene time at running time `running` (seconds), for status and events.
    public func media(at running: Double) -> Double { media(frame: frame(at: running)) }

    /// Frames before the anchor keep the state they had before it (a frame drawn late after a pause shows the time
    /// it would have shown playing; one drawn late after a play still shows the paused time), so scene time never
    /// goes back.
    private func sceneFrame(_ n: Int64) -> Int64 {
        _paused ? base + min(0, n - anchor) : base + max(0, n - anchor)
    }

    private func clamp(_ t: Double) -> Double {
        guard let d = duration else { return max(0, t) }
        return min(max(0, t), d)
    }

    private func clampFrames(_ f: Int64) -> Int64 {
        guard let d = duration else { return max(0, f) }
        return min(max(0, f), Int64((d * Double(fps)).rounded(.down)))
    }

    /// Pauses at the first frame from running time `running` (seconds); false when already paused.
    @discardableResult
    public func pause(at running: Double) -> Bool {
        lock.withLock {
            guard !_paused else { return false }
            let at = frame(at: running)
            base = clampFrames(sceneFrame(at))
            anchor = at
            _paused = true
            return true
        }
    }

    /// Plays from where it stands, without a jump, from the first frame at running time `running`; false when
    /// already playing.
    @discardableResult
    public func play(at running: Double) -> Bool {
        lock.withLock {
            guard _paused else { return false }
            anchor = max(anchor, frame(at: running))
            _paused = false
            return true
        }
    }

    /// Moves scene time by `seconds` (to the nearest frame, clamped to the timeline); returns the new scene time.
    public func skip(by seconds: Double, at running: Double) throws(Refusal) -> Double {
        guard duration != nil else { throw .live }
        return lock.withLock {
            let at = frame(at: running)
            base = clampFrames(sceneFrame(at) + Int64((seconds * Double(fps)).rounded()))
            anchor = at
            return clamp(Double(base) / Double(fps))
        }
    }

    /// True once a finite scene has reached its end at frame `n`.
    public func ended(frame n: Int64) -> Bool {
        guard let d = duration else { return false }
        return media(frame: n) >= d - 1e-9
    }
}
