import Foundation

/// Where a stepped page (on the scene's clock, `pipcompose render`) has got to: the last frame whose picture its
/// process handed over (`grabbed`), or why it never will. `PageProcess.step` waits here; the process's reader thread
/// says each frame as its picture has been put in the widget's `PageFrames`.
///
/// `@unchecked Sendable`: everything is behind `condition`.
final class PageSteps: @unchecked Sendable {
    private let condition = NSCondition()
    private var grabbed: Int64 = -1
    private var failure: String?
    private var isLoaded = false

    /// The page has loaded: its data handed over, `play()` called.
    func loaded() {
        condition.withLock {
            isLoaded = true
            condition.broadcast()
        }
    }

    /// Waits until the page has loaded; throws why it will not, or that `timeout` seconds passed.
    func waitUntilLoaded(timeout: Double, page: String) throws(PageStepError) {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        do {
            while !isLoaded {
                if let failure { throw PageStepError(description: "web '\(page)' failed before it loaded: \(failure)") }
                guard condition.wait(until: deadline) else {
                    throw PageStepError(description: "web '\(page)' did not load within \(Int(timeout)) s "
                                        + "(--web-load-timeout)")
                }
            }
        }
    }

    /// The page's picture of frame `n` is in its frames.
    func grabbed(_ n: Int64) {
        condition.withLock {
            grabbed = max(grabbed, n)
            condition.broadcast()
        }
    }

    /// The page will hand over no more pictures (its process ended, it failed).
    func fail(_ reason: String) {
        condition.withLock {
            if failure == nil { failure = reason }
            condition.broadcast()
        }
    }

    /// Waits until frame `n` was handed over; throws why not, or that `timeout` seconds passed.
    /// `stalled` is called each `stall` seconds without it (a page started again, true; false: give up).
    func wait(for n: Int64, timeout: Double, page: String, stall: Double,
              stalled: () -> Bool) throws(PageStepError) {
        var deadline = Date().addingTimeInterval(timeout)
        var nudge = Date().addingTimeInterval(stall)
        condition.lock()
        defer { condition.unlock() }
        do {
            while grabbed < n {
                if let failure { throw PageStepError(description: "web '\(page)' failed at frame \(n): \(failure)") }
                if Date() >= nudge {
                    guard stalled() else {
                        throw PageStepError(description: "web '\(page)' stopped drawing at frame \(n), and again each "
                                            + "time it was started again")
                    }
                    // A page started again loads and replays first: it gets the whole time again.
                    deadline = Date().addingTimeInterval(timeout)
                    nudge = Date().addingTimeInterval(stall + timeout / 3)
                }
                guard condition.wait(until: min(deadline, nudge)) || Date() < deadline else {
                    throw PageStepError(description: "web '\(page)' did not draw frame \(n) within \(Int(timeout)) s "
                                        + "(a script that never returns, or a page too heavy to draw?)")
                }
            }
        }
    }
}

public struct PageStepError: Error, CustomStringConvertible {
    public let description: String
}
