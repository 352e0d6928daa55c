import Foundation

/// Something that happened, as the control API's event stream carries it: a `SessionEvent`'s kind and details.
public struct ControlEvent: Sendable, Codable, Equatable {
    /// One of `SessionEvent.Kind` (docs/openapi.yaml lists them).
    public var type: String
    public var time: Date
    public var details: [String: String]

    public init(type: String, time: Date = Date(), details: [String: String] = [:]) {
        self.type = type
        self.time = time
        self.details = details
    }
}

/// Fans events out to every listener, and says on the log those that have a line (`SessionEvent.logLine`). Each listener has a bounded buffer (the newest 256 events): a client
/// that reads slowly loses old events, it never grows memory; one that goes away is forgotten.
///
/// `@unchecked Sendable`: listeners and recent events are behind `lock`.
public final class EventBus: @unchecked Sendable {
    private let lock = NSLock()
    private var listeners: [UUID: AsyncStream<ControlEvent>.Continuation] = [:]
    private var recent: [ControlEvent] = []
    /// Where the events' log lines go (the run's standard error).
    private let say: (@Sendable (String) -> Void)?

    public init(log say: (@Sendable (String) -> Void)? = nil) { self.say = say }

    public var listenerCount: Int { lock.withLock { listeners.count } }

    public func publish(_ happened: SessionEvent) {
        if let line = happened.logLine { say?(line) }
        let event = ControlEvent(type: happened.kind.rawValue, details: happened.details)
        let targets = lock.withLock { () -> [AsyncStream<ControlEvent>.Continuation] in
            recent.append(event)
            if recent.count > 100 { recent.removeFirst(recent.count - 100) }
            return Array(listeners.values)
        }
        for t in targets { t.yield(event) }
    }

    /// The last events (at most 100), oldest first.
    public var history: [ControlEvent] { lock.withLock { recent } }

    /// A stream of every event from now on; it ends when the consumer stops listening.
    public func subscribe() -> AsyncStream<ControlEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<ControlEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.listeners.removeValue(forKey: id) }
        }
        lock.withLock { listeners[id] = continuation }
        return stream
    }

    /// Ends every stream (at shutdown).
    public func finish() {
        let all = lock.withLock { () -> [AsyncStream<ControlEvent>.Continuation] in
            let a = Array(listeners.values)
            listeners = [:]
            return a
        }
        for c in all { c.finish() }
    }
}
