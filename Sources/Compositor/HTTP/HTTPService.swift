import Foundation
import Hummingbird
import HummingbirdTLS
import Logging
import ServiceLifecycle

/// A Hummingbird router served on an address, started and stopped from synchronous code: the control API and the
/// web widgets' page server. It runs in a service group of its own, so `stop` shuts it down gracefully (the
/// listener closed, requests in flight finished) instead of cancelling it mid-flight.
///
/// `@unchecked Sendable`: `task`, `group` and `port` are written by `start()` and `stop()`, which the owner calls
/// in turn, never at once.
final class HTTPService: @unchecked Sendable {
    private var task: Task<Void, Never>?
    private var group: ServiceGroup?
    /// The port it listens on, once started.
    private(set) var port = 0

    struct Failure: Error, CustomStringConvertible { let description: String }

    /// `@unchecked Sendable`: written once by the server task before `ready` is signalled, read after the wait.
    private final class Outcome: @unchecked Sendable { var port = 0; var error: (any Error)? }

    /// Binds `host:port` (0: any free port) and serves `router`; throws when it cannot listen within 10 s.
    func start<Context: RequestContext>(_ router: Router<Context>, host: String, port: Int, label: String,
                                        tls: ControlTLS? = nil) throws
        where Context.Source == ApplicationRequestContextSource {
        let ready = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        let logger = {
            var l = Logger(label: label)
            l.logLevel = .warning
            return l
        }()
        let app = Application(
            router: router,
            server: try tls.map { try .tls(.http1(), tlsConfiguration: $0.configuration) } ?? .http1(),
            configuration: .init(address: .hostname(host, port: port), serverName: "pipcompose"),
            onServerRunning: { channel in
                outcome.port = channel.localAddress?.port ?? 0
                ready.signal()
            },
            logger: logger
        )
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [],
                                                      cancellationSignals: [], logger: logger))
        self.group = group
        task = Task {
            do { try await group.run() } catch {
                outcome.error = error
                ready.signal()
            }
        }
        if ready.wait(timeout: .now() + 10) == .timedOut { throw Failure(description: "did not start within 10 s") }
        if let error = outcome.error { throw Failure(description: "\(error)") }
        self.port = outcome.port
    }

    /// Shuts the server down gracefully; cancels it if that takes over 3 s.
    func stop() {
        guard let task, let group else { return }
        let done = DispatchSemaphore(value: 0)
        Task {
            await group.triggerGracefulShutdown()
            await task.value
            done.signal()
        }
        if done.wait(timeout: .now() + 3) == .timedOut { task.cancel() }
        self.task = nil
        self.group = nil
    }
}
