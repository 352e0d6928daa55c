import Foundation

/// How long something that failed waits before it tries again: the first delay, doubled at each failure that comes
/// quickly, never more than the limit; back to the first once it has run well again. Pushes, web pages and video
/// inputs retry with one of these, so they all back off alike and the rule is tested once.
public struct Backoff: Sendable, Equatable {
    public let first: TimeInterval
    public let limit: TimeInterval
    /// How long a run must have lasted to count as a success that starts the delays over; nil: only `reset()` does.
    public let healthyAfter: TimeInterval?
    /// The delay the next failure waits.
    public private(set) var upcoming: TimeInterval

    public init(first: TimeInterval = 1, limit: TimeInterval = 30, healthyAfter: TimeInterval? = nil) {
        precondition(first > 0 && limit >= first, "a backoff's first delay is positive and at most its limit")
        self.first = first
        self.limit = limit
        self.healthyAfter = healthyAfter
        upcoming = first
    }

    /// The delay to wait after a failure, and the next one doubled (up to the limit). `ran`: how long the attempt
    /// that failed had run; one that ran `healthyAfter` or longer starts the delays over first.
    public mutating func failed(afterRunning ran: TimeInterval = 0) -> TimeInterval {
        if let healthyAfter, ran > healthyAfter { upcoming = first }
        let delay = upcoming
        upcoming = min(limit, upcoming * 2)
        return delay
    }

    /// It works again (it came back, or the user changed what it tries): the next failure waits the first delay.
    public mutating func reset() { upcoming = first }
}
