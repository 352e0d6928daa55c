import Foundation

/// Remembers that SIGINT or SIGTERM came, for loops that check between waits (`probe`, `soak`).
///
/// `@unchecked Sendable`: `_raised` is behind `lock`; `sources` is filled in `init`.
public final class SignalFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var _raised = false
    private var sources: [DispatchSourceSignal] = []

    public init(_ signals: Int32...) {
        for sig in signals {
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { [weak self] in self?.lock.withLock { self?._raised = true } }
            s.resume()
            sources.append(s)
        }
    }

    public var raised: Bool { lock.withLock { _raised } }
}
