import Foundation

/// A job the session runs once a second while it runs (new drops reported as one event, web pages told what
/// changed), on a queue of its own; started once, stopped once.
///
/// `@unchecked Sendable`: `timer` is behind `lock`.
final class EverySecond: @unchecked Sendable {
    private let label: String
    private let lock = NSLock()
    private var timer: DispatchSourceTimer?

    init(label: String) { self.label = label }

    func start(_ job: @escaping @Sendable () -> Void) {
        let t = DispatchSource.makeTimerSource(queue: DispatchQueue(label: label))
        t.schedule(deadline: .now() + 1, repeating: 1)
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
