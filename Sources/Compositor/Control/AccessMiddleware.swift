import Foundation
import HTTPTypes
import Hummingbird
import Metrics

/// Applies `ControlAccess` to every request before its route (unknown paths and preflights included), and puts the
/// headers that keep browsers from embedding or reading the answers elsewhere on every response, refusals included.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = ControlContext
    let access: ControlAccess
    let refusals: RefusalLog
    /// `--auth-hook`: asked about what `access` leaves to it.
    var hook: AuthHookClient? = nil

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        let fields = request.headers
        let check = ControlAccess.Request(
            method: request.method.rawValue, path: request.uri.path, host: request.head.authority,
            queryToken: request.uri.queryParameters.get("token"),
            header: { name in HTTPField.Name(name).flatMap { fields[$0] } })
        let origin = access.corsOrigin(request.headers[.origin])
        var response: Response
        func refuse(_ r: ControlAccess.Refusal) throws -> Response {
            refusals.note(r, method: check.method, path: check.path, origin: request.headers[.origin] ?? check.host ?? "")
            var headers: HTTPFields = [:]
            if r.status == 401 { headers[.wwwAuthenticate] = "Bearer" }
            return try HTTPError(HTTPResponse.Status(code: r.status), headers: headers, message: r.message)
                .response(from: request, context: context)
        }
        func pass(_ capability: ControlAccess.Capability, tokenInPath: Bool) async throws -> Response {
            var context = context
            context.capability = capability
            context.tokenInPath = tokenInPath
            do {
                return try await next(request, context)
            } catch let error as HTTPError where error.status == .notFound && error.body == nil {
                // No route took it (the router's own answer has no body): say so, and where the routes are.
                return try HTTPError(.notFound, message: "no route for \(check.method) \(check.path): the control API's "
                                     + "routes are in docs/CONTROL.md (and docs/openapi.yaml)")
                    .response(from: request, context: context)
            } catch let error as any HTTPResponseError {
                return try error.response(from: request, context: context)
            }
        }
        switch access.decide(check) {
        case .refuse(let r):
            response = try refuse(r)
        case .preflight:
            response = Response(status: .noContent)
            if origin != nil {
                response.headers[.accessControlAllowMethods] = "GET, POST, PATCH, DELETE"
                response.headers[.accessControlAllowHeaders] = "Authorization, Content-Type"
                response.headers[.accessControlMaxAge] = "600"
            }
        case .pass(let capability):
            response = try await pass(capability, tokenInPath: ControlAccess.hlsToken(in: check.path).map(access.isToken) ?? false)
        case .ask(var question):
            question.remote = context.remoteAddress?.ipAddress
            guard let hook else { response = try refuse(.init(status: 500, message: "no auth hook to ask")); break }
            switch await hook.ask(question) {
            case .allow(let user):
                let capability: ControlAccess.Capability = question.action == "drive" ? .drive
                    : .watch(link: question.link ?? AuthHook.watcher(user: user, token: question.token, remote: question.remote))
                response = try await pass(capability, tokenInPath: ControlAccess.hlsToken(in: check.path) != nil)
            case .refuse(let status, let message):
                response = try refuse(.init(status: status == 401 ? 401 : 403, message: "the auth hook refused to let "
                                            + "you \(question.action) (\(check.method) \(question.path)): it answered \(status)"
                                            + (message.isEmpty ? "" : ": \(message)")))
            case .down(let why):
                response = try refuse(.init(status: 503, message: "the auth hook \(hook.url.absoluteString) did not "
                                            + "answer (\(why)): nobody but the owner gets in until it does; try again "
                                            + "shortly, or tell whoever runs this stream"))
            }
        }
        Self.protect(&response, corsOrigin: origin)
        return response
    }

    static let frameOptions = HTTPField.Name("X-Frame-Options")!
    static let referrerPolicy = HTTPField.Name("Referrer-Policy")!

    /// No framing (clickjacking the page's controls), no reading from other origins' pages (`<img>` of frame.png),
    /// no token leaking through `Referer` when the page links out; CORS only for `--allow-origin` pages.
    static func protect(_ response: inout Response, corsOrigin: String?) {
        response.headers[Self.frameOptions] = "DENY"
        response.headers[.contentSecurityPolicy] = "frame-ancestors 'none'"
        response.headers[.crossOriginResourcePolicy] = "same-origin"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[Self.referrerPolicy] = "no-referrer"
        response.headers[.vary] = "Origin"
        if let corsOrigin {
            response.headers[.accessControlAllowOrigin] = corsOrigin
            response.headers[.accessControlExposeHeaders] = "Location"
        }
    }
}

/// Refusals counted (`pipcompose_control_refused_total{status}` in /metrics) and told on the log, at most one line a
/// second, so that the owner learns a page or another account tried, and a flood of attempts does not flood the log.
///
/// `@unchecked Sendable`: `lastLine` and `quiet` are behind `lock`.
final class RefusalLog: @unchecked Sendable {
    private let log: @Sendable (String) -> Void
    private let lock = NSLock()
    private var lastLine = Date.distantPast
    private var quiet = 0

    init(log: @escaping @Sendable (String) -> Void) { self.log = log }

    func note(_ r: ControlAccess.Refusal, method: String, path: String, origin: String) {
        Counter(label: "pipcompose_control_refused_total", dimensions: [("status", String(r.status))]).increment()
        let line = lock.withLock { () -> String? in
            let now = Date()
            guard now.timeIntervalSince(lastLine) >= 1 else {
                quiet += 1
                return nil
            }
            defer { lastLine = now; quiet = 0 }
            let more = quiet > 0 ? " (and \(quiet) more since the last line)" : ""
            return "control: refused \(method) \(path) from \(origin): \(r.status)\(more)"
        }
        if let line { log(line) }
    }
}
