import CGst
import Foundation

/// Paces frames on GStreamer's monotonic system clock. Frame n is due at running time n × duration, and
/// that running time is its PTS: timestamps come from the clock, so there is no drift over hours.
public final class FrameClock: @unchecked Sendable {
    public let fps: Int
    public let frameNanoseconds: UInt64
    private let clock: UnsafeMutablePointer<GstClock>
    private var base: GstClockTime = 0
    private let lock = NSLock()
    private var started = false

    public init(fps: Int) {
        Gst.initialize()
        self.fps = fps
        frameNanoseconds = UInt64(1_000_000_000 / fps)
        clock = gst_system_clock_obtain()
    }

    deinit {
        gst_object_unref(UnsafeMutableRawPointer(clock))
    }

    /// Starts running time at zero now.
    public func start() {
        base = gst_clock_get_time(clock)
        lock.withLock { started = true }
    }

    /// The system-clock time of running time 0, once started: what other pipelines on the same clock need to
    /// place a frame on their own timeline.
    public var baseTime: GstClockTime? { lock.withLock { started ? base : nil } }

    public var runningTime: UInt64 {
        let now = gst_clock_get_time(clock)
        return now >= base ? UInt64(now - base) : 0
    }

    /// Running time of frame `n`.
    public func time(ofFrame n: Int64) -> UInt64 { UInt64(n) * 1_000_000_000 / UInt64(fps) }

    /// Blocks until running time `target` on the clock; returns the running time after the wait.
    public func wait(until target: UInt64) -> UInt64 {
        let id = gst_clock_new_single_shot_id(clock, base + GstClockTime(target))
        gst_clock_id_wait(id, nil)
        gst_clock_id_unref(id)
        return runningTime
    }
}
