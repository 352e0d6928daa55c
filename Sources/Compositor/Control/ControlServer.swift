import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The HTTP/JSON control API of a running session (Hummingbird). Loopback by default, with a token by default;
/// every request passes `ControlAccess` (Host, Origin, token, content type) before its route. Every refusal is a
/// 4xx with `{"error": {"message": …}}` naming the problem, and no request can stop the stream. See
/// docs/openapi.yaml.
///
/// `@unchecked Sendable`: `boundPort` is written by `start()`, before any request; request handlers read only
/// `session`, `access` and `place`, set in `init`.
public final class ControlServer: @unchecked Sendable {
    public let session: any ControlledSession
    public let host: String
    public let port: Int
    public let access: ControlAccess
    /// Where recordings started over the API may write.
    public let place: RecordingPlace
    /// HTTPS (`--tls-cert`, `--tls-key`); nil: plain HTTP.
    public let tls: ControlTLS?
    /// `--auth-hook`: asked before a viewer or caller other than the owner is let in.
    public let hook: AuthHookClient?
    public private(set) var boundPort = 0
    private let service = HTTPService()
    /// Who watches through each watch link.
    public let viewers = LinkViewers()
    private var sweeper: DispatchSourceTimer?

    /// Bodies larger than this are refused (413).
    public static let maxBody = 1 << 20

    public init(session: any ControlledSession, host: String, port: Int, access: ControlAccess,
                place: RecordingPlace = RecordingPlace(folders: [FileManager.default.currentDirectoryPath]),
                tls: ControlTLS? = nil, hook: AuthHookClient? = nil) throws(ControlError) {
        try Self.checkExposure(host: host, token: access.token)
        self.session = session
        self.host = host
        self.port = port
        var access = access
        access.secure = tls != nil
        access.asksHook = hook != nil
        self.access = access
        self.hook = hook
        self.place = place
        self.tls = tls
    }

    public var token: String? { access.token }

    /// Whether `host` is a loopback address or name.
    public static func isLoopback(_ host: String) -> Bool { ControlAccess.isLoopback(ControlAccess.normalHost(host)) }

    /// The rule for who may reach the API: off loopback, only with a token.
    public static func checkExposure(host: String, token: String?) throws(ControlError) {
        if !isLoopback(host) && (token ?? "").isEmpty {
            throw .bad("the control API on \(host) is reachable from other machines: it needs a token (drop "
                       + "--no-control-token, or give --control-token TOKEN or PIPCOMPOSE_CONTROL_TOKEN)")
        }
    }

    /// Parses `[HOST:]PORT`.
    public static func parseAddress(_ text: String, option: String = "--control") throws(ControlError) -> (String, Int) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        let host = parts.count == 2 ? String(parts[0]) : "127.0.0.1"
        guard parts.count <= 2, let port = Int(parts.last ?? ""), (0...65535).contains(port) else {
            throw .bad("invalid \(option) '\(text)': expected [HOST:]PORT, e.g. 8555 or 127.0.0.1:8555")
        }
        return (host.isEmpty ? "127.0.0.1" : host, port)
    }

    /// Binds and serves; throws when the port cannot be had.
    public func start() throws {
        do { try service.start(makeRouter(), host: host, port: port, label: "pipcompose.control", tls: tls) } catch {
            throw ControlError(500, "cannot serve the control API on \(host):\(port): \(error); choose another "
                               + "port with --control PORT (another pipcompose?)")
        }
        boundPort = service.port
        watchLinksEnding()
    }

    /// The watch links made so far, and more to be made (`POST /v1/links`).
    public var links: WatchLinks { access.links }

    /// When a link ends (revoked, or found expired by the sweep once a second), the WHEP sessions it opened end.
    private func watchLinksEnding() {
        let viewers = self.viewers, session = self.session
        links.onEnd { link in
            guard let whep = session.whep else { return }
            let open = viewers.sessions(of: link.id, open: Set(whep.sessionIDs))
            guard !open.isEmpty else { return }
            session.log("watch link \(link.id) \(link.revoked == nil ? "expired" : "revoked"): ending its "
                        + "\(open.count) WebRTC session\(open.count == 1 ? "" : "s")")
            Task {
                for id in open {
                    try? await whep.end(id)
                    viewers.sessionEnded(id)
                }
            }
        }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [links] in links.sweep() }
        timer.resume()
        sweeper = timer
    }

    public var url: String { "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(boundPort)" }

    /// `https` with `--tls-cert`, else `http`.
    public var scheme: String { tls == nil ? "http" : "https" }

    /// The page's address with the token, as the browser should open it (what `run` prints).
    public var pageURL: String { Self.pageURL(base: url, token: access.token) }

    public static func pageURL(base: String, token: String?) -> String {
        guard let token else { return base + "/" }
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&+=#")
        return base + "/?token=" + (token.addingPercentEncoding(withAllowedCharacters: allowed) ?? token)
    }

    /// Ends the event streams, then shuts the server down gracefully.
    public func stop() {
        sweeper?.cancel()
        sweeper = nil
        session.events.finish()
        service.stop()
        hook?.stop()
    }

    // MARK: - Routes

    /// Every route, one group per file in Routes/, behind the access check.
    func makeRouter() -> Router<ControlContext> {
        let router = Router(context: ControlContext.self)
        // First, so that it guards every route added below, unknown paths and preflights too.
        router.add(middleware: AccessMiddleware(access: access, refusals: RefusalLog(log: session.log), hook: hook))
        router.addRoutes(StatusRoutes(session: session, links: links, viewers: viewers).routes)
        router.addRoutes(PlaybackRoutes(session: session).routes)
        router.addRoutes(NowPlayingRoutes(session: session).routes)
        router.addRoutes(WidgetRoutes(session: session).routes)
        router.addRoutes(OutputRoutes(session: session, place: place).routes)
        router.addRoutes(WebRTCRoutes(session: session, links: links, viewers: viewers).routes)
        router.addRoutes(HLSRoutes(session: session, viewers: viewers).routes)
        router.addRoutes(LinkRoutes(session: session, links: links, viewers: viewers, scheme: scheme).routes)
        return router
    }
}
