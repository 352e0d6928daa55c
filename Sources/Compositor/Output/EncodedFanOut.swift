import Foundation

/// Where an encoder's packets go: to every subscriber, at once or through the delay line of `--inject-delay-ms`.
/// The picture's encoders (`Encoder`) and the sound's (`AudioEncoder`) hand their output on, and end, through one
/// of these, so both deliver and drain alike.
///
/// `@unchecked Sendable`: the subscribers and the delay line are behind `lock`, held only to copy them.
final class EncodedFanOut: @unchecked Sendable {
    typealias Subscriber = (_ buffer: MediaBuffer, _ caps: MediaCaps?) -> Void

    private let lock = NSLock()
    private var subscribers: [ObjectIdentifier: Subscriber] = [:]
    private var delayLine: DelayLine?

    func subscribe(_ owner: AnyObject, _ handler: @escaping Subscriber) {
        lock.withLock { subscribers[ObjectIdentifier(owner)] = handler }
    }

    func unsubscribe(_ owner: AnyObject) {
        _ = lock.withLock { subscribers.removeValue(forKey: ObjectIdentifier(owner)) }
    }

    var count: Int { lock.withLock { subscribers.count } }

    /// Who subscribed, as `subscribe` keyed them.
    var owners: [ObjectIdentifier] { lock.withLock { Array(subscribers.keys) } }

    /// Hands a packet to every subscriber, through the delay line when one is set.
    func hand(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        if let line = lock.withLock({ delayLine }) { line.push(buffer, caps) } else { deliver(buffer, caps) }
    }

    private func deliver(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        let subs = lock.withLock { Array(subscribers.values) }
        for s in subs { s(buffer, caps) }
    }

    /// Holds every packet `milliseconds` before the subscribers get it; at most `capacity` wait.
    func delay(by milliseconds: Double, capacity: Int) {
        let line = DelayLine(delayMilliseconds: milliseconds, capacity: capacity) { [weak self] b, c in self?.deliver(b, c) }
        lock.withLock { delayLine = line }
    }

    /// How long packets were really held by the injected delay.
    var delayHeld: LatencySummary? { lock.withLock { delayLine }?.heldMilliseconds }

    /// Packets the injected delay had no room for.
    var delayDropped: UInt64 { lock.withLock { delayLine?.dropped ?? 0 } }

    /// Lets the delayed packets out (waiting up to `timeout` past the delay itself), then ends the delay line.
    func drainDelayed(timeout: TimeInterval) {
        guard let line = lock.withLock({ delayLine }) else { return }
        line.drain(timeout: timeout + Double(line.delayNanoseconds) / 1e9)
    }

    /// Ends an encoder whose packets come through here: end of stream into its `input`, waits up to `timeout` for
    /// it at the output, stops the pipeline, then lets the delayed packets out. False when the end did not come out.
    func finish(_ pipeline: Pipeline, input: AppSource, timeout: TimeInterval) -> Bool {
        input.endOfStream()
        let ok = pipeline.waitForEOS(timeout: timeout)
        pipeline.stop(drain: false)
        drainDelayed(timeout: timeout)
        return ok
    }

    deinit { delayLine?.stop() }
}
