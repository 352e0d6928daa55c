import Foundation

/// Where the frames read from one launch of a page's process go: the widget's `PageFrames`, or, for a launch
/// started beside the running one to take its place (a renewal), frames of its own that no widget draws, until it
/// is promoted. The reader holds the route while it fills a frame, so a promotion never loses the frame being read.
///
/// `@unchecked Sendable`: `target` is behind `lock`.
final class FrameRoute: @unchecked Sendable {
    private let lock = NSLock()
    private var target: PageFrames

    init(_ target: PageFrames) { self.target = target }

    /// Runs `body` with the frames this launch fills now, holding the route.
    func with<T>(_ body: (PageFrames) -> T) -> T { lock.withLock { body(target) } }

    /// From now on this launch fills `frames`, which takes over its newest frame first. False, and nothing changed,
    /// when a frame being read into the route is not done within `wait`: the caller tries again later, and never
    /// waits long on a pipe (a launch stopped in the middle of a frame holds the route until the reader gives up).
    func promote(to frames: PageFrames, wait: TimeInterval = 0.2) -> Bool {
        guard lock.lock(before: Date().addingTimeInterval(wait)) else { return false }
        defer { lock.unlock() }
        guard target !== frames else { return true }
        frames.takeOver(from: target)
        target = frames
        return true
    }
}
