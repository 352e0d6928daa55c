import Foundation

/// Holds encoded frames for a fixed time before handing them on: a known delay injected between the source
/// and its viewers, so a probe's latency figure can be checked against it (`--inject-delay-ms`).
///
/// One thread sleeps on the monotonic clock until each frame's release time (to a fraction of a millisecond,
/// unlike a dispatch timer's leeway). At most `capacity` frames wait; past that a frame is dropped and counted.
///
/// `@unchecked Sendable`: the queue and counters are only touched under `cond`.
final class DelayLine: @unchecked Sendable {
    typealias Deliver = (_ buffer: MediaBuffer, _ caps: MediaCaps?) -> Void
    private struct Held {
        let release: UInt64
        let buffer: MediaBuffer
        let caps: MediaCaps?
    }

    let delayNanoseconds: UInt64
    let capacity: Int
    private let deliver: Deliver
    private let cond = NSCondition()
    private var queue: [Held] = []
    private var stopped = false
    private var _dropped: UInt64 = 0
    /// How long frames were really held (a loaded machine wakes the thread late): the delay a probe should find.
    private var held = LatencyHistogram()
    private var thread: Thread?

    init(delayMilliseconds: Double, capacity: Int, deliver: @escaping Deliver) {
        delayNanoseconds = UInt64(max(0, delayMilliseconds) * 1_000_000)
        self.capacity = max(1, capacity)
        self.deliver = deliver
        let t = Thread { [weak self] in self?.run() }
        t.name = "delay-line"
        thread = t
        t.start()
    }

    static func monotonicNow() -> UInt64 { FrameClock.monotonicNow() }

    var dropped: UInt64 { cond.withLock { _dropped } }
    var heldMilliseconds: LatencySummary? { cond.withLock { held.summary } }

    /// Holds the frame and its caps until its time comes.
    func push(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        let held = Held(release: Self.monotonicNow() + delayNanoseconds, buffer: buffer, caps: caps)
        cond.lock()
        if stopped || queue.count >= capacity {
            _dropped += stopped ? 0 : 1
            cond.unlock()
            return
        }
        queue.append(held)
        cond.signal()
        cond.unlock()
    }

    private func run() {
        while true {
            cond.lock()
            while queue.isEmpty && !stopped { cond.wait() }
            if stopped {
                queue = []
                cond.unlock()
                return
            }
            let head = queue[0]
            cond.unlock()
            var ts = timespec(tv_sec: Int(head.release / 1_000_000_000), tv_nsec: Int(head.release % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
            cond.lock()
            guard !stopped else { cond.unlock(); continue }
            held.add(Double(Self.monotonicNow() - (head.release - delayNanoseconds)) / 1e6)
            cond.unlock()
            deliver(head.buffer, head.caps)
            cond.withLock {
                if !queue.isEmpty { queue.removeFirst() }
                cond.broadcast()
            }
        }
    }

    /// Lets every waiting frame out (at its time), then ends the thread.
    func drain(timeout: TimeInterval) {
        let deadline = Date().addingTimeInterval(timeout)
        cond.lock()
        while !queue.isEmpty && !stopped { if !cond.wait(until: deadline) { break } }
        cond.unlock()
        stop()
    }

    /// Ends the thread; frames still waiting are let go undelivered.
    func stop() {
        cond.withLock {
            stopped = true
            cond.broadcast()
        }
    }
}
