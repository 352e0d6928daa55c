import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Serves `GET /metrics` (Prometheus text) for a command without a control API (`probe --metrics`): loopback by
/// default, behind the same checks as the control API (Host, Origin, the bearer token unless `metricsOpen`).
///
/// `@unchecked Sendable`: `boundPort` is written by `start()` before any request.
public final class MetricsServer: @unchecked Sendable {
    public let host: String
    public let port: Int
    private let access: ControlAccess
    private let text: @Sendable () -> String
    private let service = HTTPService()
    public private(set) var boundPort = 0

    /// `token` nil needs `open` and a loopback host (what `ControlServer.checkExposure` enforces).
    public init(host: String, port: Int, token: String?, open: Bool, extraHosts: [String] = [],
                text: @escaping @Sendable () -> String) throws(ControlError) {
        if token == nil && !open {
            throw .bad("--metrics needs a token (--metrics-token TOKEN or PIPCOMPOSE_METRICS_TOKEN; Prometheus sends it "
                       + "with `authorization: {credentials_file: …}`), or --metrics-open on loopback")
        }
        if open && !ControlServer.isLoopback(host) {
            throw .bad("--metrics-open is for loopback only: give Prometheus the token instead (authorization: "
                       + "credentials_file in its scrape config)")
        }
        try ControlServer.checkExposure(host: host, token: token ?? (open ? "open" : nil))
        self.host = host
        self.port = port
        access = ControlAccess(token: token, hosts: ControlAccess.hosts(listeningOn: host, extra: extraHosts),
                               metricsOpen: open)
        self.text = text
    }

    public func start() throws {
        let router = Router(context: ControlContext.self)
        router.add(middleware: AccessMiddleware(access: access, refusals: RefusalLog(log: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })))
        let text = self.text
        router.get("/metrics") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text())))
        }
        do { try service.start(router, host: host, port: port, label: "pipcompose.metrics") } catch {
            throw ControlError(500, "cannot serve metrics on \(host):\(port): \(error); choose another port with --metrics")
        }
        boundPort = service.port
    }

    public var url: String { "http://\(host.contains(":") ? "[\(host)]" : host):\(boundPort)/metrics" }

    public func stop() { service.stop() }
}
