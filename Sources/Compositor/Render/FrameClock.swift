import Foundation

/// Paces frames on the monotonic clock. Frame n is due at running time n × duration, and that running time is
/// its PTS: timestamps come from the clock, so there is no drift over hours.
///
/// The monotonic clock is the one GStreamer's system clock reads (`GST_CLOCK_TYPE_MONOTONIC`, its default), so
/// `baseTime` is a time on the clock of every pipeline here: other pipelines place a frame on their own timeline
/// with it (`MediaClockMapper`).
///
/// `@unchecked Sendable`: `base` is written once, by `start()`, before `started` is set under the lock; readers
/// look at `started` under the lock first.
public final class FrameClock: @unchecked Sendable {
    public let fps: Int
    public let frameNanoseconds: UInt64
    private var base: UInt64 = 0
    private let lock = NSLock()
    private var started = false

    public init(fps: Int) {
        self.fps = fps
        frameNanoseconds = UInt64(1_000_000_000 / fps)
    }

    /// Nanoseconds on the monotonic clock.
    public static func monotonicNow() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Starts running time at zero now.
    public func start() {
        base = Self.monotonicNow()
        lock.withLock { started = true }
    }

    /// The monotonic time of running time 0, once started.
    public var baseTime: MediaTime? { lock.withLock { started ? base : nil } }

    public var runningTime: UInt64 {
        let now = Self.monotonicNow()
        return now >= base ? now - base : 0
    }

    /// Running time of frame `n`.
    public func time(ofFrame n: Int64) -> UInt64 { UInt64(n) * 1_000_000_000 / UInt64(fps) }

    /// Sleeps until running time `target`; returns the running time after the wait.
    public func wait(until target: UInt64) -> UInt64 {
        let due = base + target
        var ts = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
        // An absolute deadline: a signal that interrupts the sleep restarts it towards the same instant.
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
        return runningTime
    }
}
