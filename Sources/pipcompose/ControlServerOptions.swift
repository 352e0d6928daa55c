import ArgumentParser
import Compositor
import Foundation

/// Where `run` serves its control API and whom it answers (see ControlAccess, RecordingPlace).
struct ControlServerOptions: ParsableArguments {
    @Option(help: "Serve the HTTP control API at [HOST:]PORT (port 0 picks a free one).")
    var control: String = "127.0.0.1:8555"

    @Flag(help: "Do not serve the control API.")
    var noControl = false

    @Option(help: "The control API's bearer token (default: $PIPCOMPOSE_CONTROL_TOKEN, else a random one, kept where only you can read it, for pipcompose ctl).")
    var controlToken: String?

    @Flag(help: "No token on the control API (loopback only): any program of any account on this machine may then drive it.")
    var noControlToken = false

    @Option(help: "Let the page at this origin call the control API from a browser (CORS), e.g. https://panel.example:8443. Repeatable.")
    var allowOrigin: [String] = []

    @Option(help: "Answer requests that name this machine HOST (a name or address other than loopback and the listening address). Repeatable.")
    var allowHost: [String] = []

    @Flag(help: "Serve /metrics without the token (loopback only), for a Prometheus on this machine.")
    var metricsOpen = false

    @Option(help: "A folder recordings started over the control API may write into (default: the folder run starts in). Repeatable.")
    var recordDir: [String] = []

    @Option(help: "Serve the control port (page, WHEP, HLS, API) over HTTPS with this PEM certificate (and chain); with --tls-key.")
    var tlsCert: String?

    @Option(help: "The PEM private key of --tls-cert (unencrypted; keep it readable by you alone).")
    var tlsKey: String?

    @Option(help: "Ask this URL before letting in a viewer or caller other than the owner (POST, JSON: action, protocol, method, path, link or token, remote); 2xx lets in. For deployments with their own users.")
    var authHook: String?

    @Option(help: "Seconds an answer of --auth-hook is kept for the same action, token and address (0: ask every request).")
    var authHookCache: Double = 10

    var token: String? { controlToken ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_CONTROL_TOKEN"] }

    func validate() throws { _ = try settings() }

    /// The control API's settings, nil with --no-control.
    func settings() throws -> ControlSettings? {
        guard !noControl else { return nil }
        switch Result(catching: { () throws(ControlError) in try controlSettings() }) {
        case .success(let s): return s
        case .failure(let e): throw ValidationError(e.message)
        }
    }

    /// The checks that need no running instance.
    private func controlSettings() throws(ControlError) -> ControlSettings {
        let (host, port) = try ControlServer.parseAddress(control)
        var c = ControlSettings(host: host, port: port)
        let loopback = ControlServer.isLoopback(host)
        if noControlToken {
            if token != nil {
                throw .bad("--no-control-token and a token (--control-token or PIPCOMPOSE_CONTROL_TOKEN) contradict "
                           + "each other: drop one")
            }
            if !loopback {
                throw .bad("--no-control-token is for loopback only: the control API on \(host) would let any machine "
                           + "drive it")
            }
            c.token = .none
        } else if let token {
            guard !token.isEmpty, token.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }) else {
                throw .bad("the control token must be printable ASCII without spaces")
            }
            c.token = .given(token)
        }
        try ControlServer.checkExposure(host: host, token: noControlToken ? nil : "x")
        if metricsOpen && !loopback {
            throw .bad("--metrics-open is for loopback only: give Prometheus the token instead (authorization: "
                       + "credentials_file in its scrape config)")
        }
        for o in allowOrigin {
            guard let u = URLComponents(string: o), ["http", "https"].contains(u.scheme ?? ""), u.host?.isEmpty == false,
                  u.path.isEmpty, u.query == nil, u.fragment == nil, u.user == nil else {
                throw .bad("--allow-origin takes an origin like https://panel.example or http://127.0.0.1:3000 "
                           + "(scheme, host, port; no path), got '\(o)'")
            }
        }
        for h in allowHost {
            guard !h.isEmpty, !h.contains("/"), !h.contains("@"), !h.contains(" "), !h.contains("*") else {
                throw .bad("--allow-host takes a host name or address without port or scheme, e.g. pip.lan, got '\(h)'")
            }
        }
        for d in recordDir {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: d, isDirectory: &isDir), isDir.boolValue else {
                throw .bad("--record-dir '\(d)' is not an existing folder; create it first")
            }
        }
        switch (tlsCert, tlsKey) {
        case (let cert?, let key?): c.tls = try ControlTLS(certificate: cert, key: key)
        case (nil, nil): break
        default: throw .bad("--tls-cert and --tls-key go together: the certificate and its private key, both PEM")
        }
        if let authHook { c.hook = try AuthHookClient(url: authHook, cacheFor: authHookCache) }
        c.allowOrigins = allowOrigin
        c.allowHosts = allowHost
        c.metricsOpen = metricsOpen
        c.recordDirs = recordDir
        return c
    }

}
