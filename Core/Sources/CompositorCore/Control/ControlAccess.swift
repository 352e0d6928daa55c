import Foundation

/// Who may use the control API, decided for each request before any route runs: the same rules for every surface
/// (the JSON API, the page, WHEP, the event stream, frame.png, metrics).
///
/// A browser is the client to distrust: any page the user opens can send "simple" requests to loopback (no
/// preflight), and a page whose name an attacker rebinds to 127.0.0.1 can read the answers. Hence, in order:
/// the `Host` must name this machine (DNS rebinding), a cross-origin request must come from an allowed origin
/// (`Origin`, and `Sec-Fetch-Site` for the requests that carry no `Origin`: images, no-cors GETs), the bearer
/// token must match (other accounts, other machines), and a JSON body must say so (`Content-Type`), so that no
/// simple request changes anything.
public struct ControlAccess: Sendable {
    /// The bearer token every request needs; nil only on loopback, by the user's choice (`--no-control-token`).
    public var token: String?
    /// Host names (without port) a request's `Host` may carry besides the loopback names.
    public var hosts: Set<String>
    /// Origins (`scheme://host[:port]`) of pages elsewhere allowed to call the API (CORS), besides its own.
    public var origins: Set<String>
    /// `/metrics` answers without the token (Prometheus scrapes without one by convention).
    public var metricsOpen = false
    /// The watch links: tokens that only watch (`WatchRules`).
    public var links: WatchLinks
    /// Served over HTTPS: the API's own page has an `https://` origin.
    public var secure = false
    /// `--auth-hook`: a request that is not the owner's is let in only if the hook says so (`AuthHook`).
    public var asksHook = false

    public init(token: String?, hosts: Set<String> = [], origins: Set<String> = [], metricsOpen: Bool = false,
                links: WatchLinks = WatchLinks()) {
        self.token = token
        self.hosts = Set(hosts.map { Self.normalHost($0) })
        self.origins = Set(origins.map { $0.lowercased() })
        self.metricsOpen = metricsOpen
        self.links = links
    }

    /// What a request that passed may do: drive (the control token, or no token on loopback), or only watch, through
    /// the watch link it names.
    public enum Capability: Equatable, Sendable {
        case drive
        case watch(link: String)
    }

    /// The names a request to a server listening on `listenHost` may use: loopback, the address it listens on,
    /// and on a wildcard address the machine's own addresses and name. `extra` are the user's `--allow-host`.
    public static func hosts(listeningOn listenHost: String, extra: [String]) -> Set<String> {
        var names: Set<String> = ["localhost", "127.0.0.1", "::1"]
        switch listenHost {
        case "0.0.0.0", "::", "":
            names.formUnion(LocalAddresses.ipv4Interfaces())
            var buffer = [CChar](repeating: 0, count: 256)
            if gethostname(&buffer, buffer.count) == 0 { names.insert(String(cString: buffer)) }
        default:
            names.insert(listenHost)
        }
        return Set((names.union(extra)).map { normalHost($0) })
    }

    /// A refusal: the HTTP status and a message that says what to do.
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public let status: Int
        public let message: String
        public var description: String { "\(status): \(message)" }

        public init(status: Int, message: String) {
            self.status = status
            self.message = message
        }
    }

    /// What the checks read of a request.
    public struct Request: Sendable {
        public var method: String
        public var path: String
        /// The `Host` header (HTTP/1.1) or `:authority` (HTTP/2), with its port.
        public var host: String?
        public var header: @Sendable (String) -> String?
        /// `?token=` (a page and its event stream cannot set headers when a browser opens them).
        public var queryToken: String?

        public init(method: String, path: String, host: String?, queryToken: String?,
                    header: @escaping @Sendable (String) -> String?) {
            self.method = method.uppercased()
            self.path = path
            self.host = host
            self.queryToken = queryToken
            self.header = header
        }
    }

    /// What to do with a request: refuse it, answer a CORS preflight, or let it through.
    public enum Decision: Equatable {
        case refuse(Refusal)
        /// An `OPTIONS` preflight from an allowed origin: answer 204 with the CORS headers, nothing else runs.
        case preflight
        case pass(Capability)
        /// Passed the checks this process makes; the auth hook decides (`--auth-hook`). The caller's address is
        /// the middleware's to fill in.
        case ask(AuthHook.Question)
    }

    public func decide(_ r: Request) -> Decision {
        // DNS rebinding: a page at evil.example whose name now resolves to 127.0.0.1 sends `Host: evil.example`.
        guard let host = r.host, !host.isEmpty else {
            return .refuse(Refusal(status: 400, message: "a Host header is required"))
        }
        let name = Self.normalHost(Self.hostName(host))
        guard Self.isLoopback(name) || hosts.contains(name) else {
            return .refuse(Refusal(status: 403, message: "Host '\(host)' is not this machine: the control API answers "
                                   + "requests to loopback and to the address it listens on; to reach it by "
                                   + "another name, start it with --allow-host \(name)"))
        }
        if let origin = r.header("origin"), !isAllowed(origin: origin, host: host) {
            return .refuse(Refusal(status: 403, message: "requests from pages at '\(origin)' are refused: only the "
                                   + "API's own page may call it; to let another page call it, start it with "
                                   + "--allow-origin \(origin)"))
        }
        // Requests a browser sends without `Origin` (an <img>, a no-cors GET) still say where they come from.
        if r.header("origin") == nil, let site = r.header("sec-fetch-site")?.lowercased(),
           site == "cross-site" || site == "same-site", !isTopLevelNavigation(r) {
            return .refuse(Refusal(status: 403, message: "requests from other sites' pages are refused"))
        }
        if r.method == "OPTIONS" { return .preflight }
        let given = r.header("authorization").flatMap(Self.bearer) ?? r.queryToken ?? Self.hlsToken(in: r.path)
        // A watch link's token only watches, whether or not the API has a control token.
        switch given.flatMap({ links.lookup(token: $0) }) {
        case .live(let link):
            guard WatchRules.allows(method: r.method, path: r.path) else {
                return .refuse(Refusal(status: 403, message: "watch link \(link.id) only watches (the page, WHEP, the "
                                       + "HLS ladder, RTSP): \(r.method) \(r.path) needs the control token"))
            }
            if let refusal = contentTypeRefusal(r) { return .refuse(refusal) }
            return asksHook ? .ask(.about(method: r.method, path: r.path, link: link.id, token: nil))
                : .pass(.watch(link: link.id))
        case .revoked(let link):
            return .refuse(Refusal(status: 401, message: "watch link \(link.id) was revoked; ask whoever gave it to "
                                   + "you for a new one"))
        case .expired(let link):
            return .refuse(Refusal(status: 401, message: "watch link \(link.id) expired at "
                                   + "\(ISO8601DateFormatter().string(from: link.expires ?? links.now)); ask whoever "
                                   + "gave it to you for a new one"))
        case nil:
            break
        }
        if let token, !(metricsOpen && r.path == "/metrics") {
            guard let given, Self.same(given, token) else {
                // The deployment's own users: its hook is asked, with the token as given (or none).
                if asksHook {
                    if let refusal = contentTypeRefusal(r) { return .refuse(refusal) }
                    return .ask(.about(method: r.method, path: r.path, link: nil, token: given))
                }
                let how = r.path == "/metrics"
                    ? "(Prometheus: `authorization: {type: Bearer, credentials_file: FILE}` in its scrape config, the "
                        + "file holding the token the process was given)"
                    : "(pipcompose ctl finds it for the user who started run; a browser opens the page URL that run "
                        + "printed, with ?token=…; `pipcompose ctl page` prints it)"
                return .refuse(Refusal(status: 401, message: "missing or wrong token: send Authorization: Bearer TOKEN " + how))
            }
        }
        return contentTypeRefusal(r).map(Decision.refuse) ?? .pass(.drive)
    }

    /// A body that does not say it is JSON changes nothing: what a page can send without a preflight is refused.
    private func contentTypeRefusal(_ r: Request) -> Refusal? {
        // WHEP's own requests carry SDP; a session's window (`/v1/whep/ID/window`) is JSON like the rest.
        let sdp = r.path.hasPrefix("/v1/whep") && !r.path.hasSuffix("/window")
        guard ["POST", "PUT", "PATCH"].contains(r.method), !sdp else { return nil }
        let type = (r.header("content-type") ?? "").lowercased()
        guard type.split(separator: ";").first?.trimmingCharacters(in: .whitespaces) == "application/json" else {
            return Refusal(status: 415, message: "send the body as JSON with Content-Type: "
                           + "application/json (got '\(type)'), even when it is empty")
        }
        return nil
    }

    /// The token an HLS player's request carries in its path, `/hls/TOKEN/master.m3u8`: players resolve the
    /// playlists' relative URIs against the playlist's path (a `?token=` would not reach the segments), and send no
    /// headers of ours.
    public static func hlsToken(in path: String) -> String? {
        guard path.hasPrefix("/hls/") else { return nil }
        let rest = path.dropFirst("/hls/".count)
        guard let slash = rest.firstIndex(of: "/"), slash > rest.startIndex else { return nil }
        return String(rest[..<slash])
    }

    /// Whether `text` is the control token or a watch link's (live or not).
    public func isToken(_ text: String) -> Bool {
        (token.map { Self.same(text, $0) } ?? false) || links.lookup(token: text) != nil
    }

    /// The page's own origin (the `Host` it was loaded from), or one given with `--allow-origin`.
    public func isAllowed(origin: String, host: String) -> Bool {
        let o = origin.lowercased()
        return o == (secure ? "https://" : "http://") + host.lowercased() || origins.contains(o)
    }

    /// Whether the response to a request from `origin` carries CORS headers: only for `--allow-origin` pages (the
    /// API's own page needs none).
    public func corsOrigin(_ origin: String?) -> String? {
        guard let origin, origins.contains(origin.lowercased()) else { return nil }
        return origin
    }

    /// A user following a link to the page (or a status URL) from elsewhere: the browser shows the answer to the
    /// user, the linking page cannot read it, and without the token in the link nothing more is served.
    private func isTopLevelNavigation(_ r: Request) -> Bool {
        r.method == "GET" && r.header("sec-fetch-mode")?.lowercased() == "navigate"
            && !["object", "embed", "iframe", "frame"].contains(r.header("sec-fetch-dest")?.lowercased() ?? "")
    }

    /// `Bearer TOKEN` → TOKEN.
    static func bearer(_ value: String) -> String? {
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }

    /// Compares in time that does not depend on where the strings first differ.
    public static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var diff = UInt8(x.count == y.count ? 0 : 1)
        for i in 0..<y.count { diff |= (i < x.count ? x[i] : 0) ^ y[i] }
        return diff == 0
    }

    /// `[::1]:8555` → `::1`, `127.0.0.1:8555` → `127.0.0.1`, `Name.` → `name`.
    public static func hostName(_ hostPort: String) -> String {
        if hostPort.hasPrefix("["), let close = hostPort.firstIndex(of: "]") {
            return String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
        }
        if hostPort.filter({ $0 == ":" }).count == 1, let colon = hostPort.firstIndex(of: ":") {
            return String(hostPort[..<colon])
        }
        return hostPort
    }

    public static func normalHost(_ name: String) -> String {
        var n = name.lowercased()
        if n.hasPrefix("[") && n.hasSuffix("]") { n = String(n.dropFirst().dropLast()) }
        while n.hasSuffix(".") { n.removeLast() }
        return n
    }

    /// `localhost`, `::1` and all of 127.0.0.0/8.
    public static func isLoopback(_ name: String) -> Bool {
        if name == "localhost" || name == "::1" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
