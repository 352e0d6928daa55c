import Foundation

/// A wait that ran out: what was waited for, and for how long.
public struct PollTimedOut: Error, CustomStringConvertible {
    public let what: String
    public let timeout: TimeInterval

    public var description: String { "waited \(timeout) s for \(what), in vain" }
}

/// Waits until `condition` holds, checking it every `interval` seconds for at most `timeout` seconds: true as soon
/// as it holds, false if it still does not once the timeout passed (it is checked once more then). For what nothing
/// signals to the test (a file that grows, another process's status, a picture served over HTTP); a wait that can
/// block on a signal (a line of output, an event, the bus) blocks on it instead. This is the one place in the tests
/// that sleeps between checks: a sleep anywhere else is a wait for time to pass, which a test must not rely on.
@discardableResult
public func poll(until condition: () throws -> Bool, timeout: TimeInterval,
                 every interval: TimeInterval = 0.1) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: max(0, min(interval, deadline.timeIntervalSinceNow)))
    }
    return try condition()
}

/// `poll(until:timeout:every:)` for a wait the test cannot go on without: throws `PollTimedOut`, naming `what` was
/// waited for, once the timeout passed.
public func poll(_ what: @autoclosure () -> String, until condition: () throws -> Bool, timeout: TimeInterval,
                 every interval: TimeInterval = 0.1) throws {
    guard try poll(until: condition, timeout: timeout, every: interval) else {
        throw PollTimedOut(what: what(), timeout: timeout)
    }
}

/// `poll(until:timeout:every:)` for async code: it sleeps with `Task.sleep`, so a wait leaves its thread to the
/// other tasks (among them, often, the ones that make the condition hold).
@discardableResult
public func pollAsync(until condition: () async throws -> Bool, timeout: TimeInterval,
                      every interval: TimeInterval = 0.1) async throws -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .seconds(max(0, min(interval, deadline.timeIntervalSinceNow))))
    }
    return try await condition()
}
