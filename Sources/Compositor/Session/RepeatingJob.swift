import Foundation

/// A job the session runs every `interval` seconds while it runs (new drops reported as one event, web pages told
/// what changed, free memory given back), on a queue of its own; started once, stopped once.
///
/// `@unchecked Sendable`: `timer` is behind `lock`.
final class RepeatingJob: @unchecked Sendable {
    private let label: String
    private let interval: TimeInterval
    private let lock = NSLock()
    private var timer: DispatchSourceTimer?

    init(label: String, every interval: TimeInterval) {
        self.label = label
        self.interval = interval
    }

    func start(_ job: @escaping @Sendable () -> Void) {
        let t = DispatchSource.makeTimerSource(queue: DispatchQueue(label: label))
        t.schedule(deadline: .now() + interval, repeating: interval)
        t.setEventHandler(handler: job)
        t.resume()
        lock.withLock { timer = t }
    }

    func stop() {
        lock.withLock {
            timer?.cancel()
            timer = nil
        }
    }
}
