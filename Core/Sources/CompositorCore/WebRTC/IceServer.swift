import Foundation

/// A STUN or TURN server for NAT traversal (`--ice-server`): given to every viewer's webrtcbin and to the page's
/// `RTCPeerConnection`. Written as browsers write them (RFC 7064, 7065): `stun:HOST[:PORT]`,
/// `turn:HOST[:PORT][?transport=udp|tcp]`, `turns:HOST[:PORT][?transport=tcp]`.
public struct IceServer: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable { case stun, turn, turns }
    public var kind: Kind
    public var host: String
    public var port: Int
    /// TURN's transport to the server; nil: the client's choice (UDP first).
    public var transport: String?

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public static func parse(_ text: String) throws(Invalid) -> IceServer {
        let rule = "expected stun:HOST[:PORT], turn:HOST[:PORT][?transport=udp|tcp] or turns:HOST[:PORT], got '\(text)'"
        guard let colon = text.firstIndex(of: ":"), let kind = Kind(rawValue: text[..<colon].lowercased()) else {
            throw Invalid(description: "--ice-server: \(rule)")
        }
        var rest = String(text[text.index(after: colon)...])
        if rest.hasPrefix("//") {
            throw Invalid(description: "--ice-server: no '//' after '\(kind.rawValue):' (as browsers write it): \(rule)")
        }
        var transport: String?
        if let q = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: q)...]
            rest = String(rest[..<q])
            guard kind != .stun, query.hasPrefix("transport="),
                  let t = Optional(String(query.dropFirst("transport=".count)).lowercased()), t == "udp" || t == "tcp" else {
                throw Invalid(description: "--ice-server: only TURN takes ?transport=udp or ?transport=tcp: \(rule)")
            }
            if kind == .turns && t == "udp" {
                throw Invalid(description: "--ice-server: turns: runs over TLS, which is TCP: drop ?transport=udp")
            }
            transport = t
        }
        if rest.contains("@") {
            throw Invalid(description: "--ice-server: no user or password in the URL: TURN's come from --turn-secret, "
                          + "made per session")
        }
        var host = rest, port = kind == .turns ? 5349 : 3478
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let p = Int(after.dropFirst()) else { throw Invalid(description: "--ice-server: \(rule)") }
                port = p
            }
        } else if let c = rest.lastIndex(of: ":") {
            host = String(rest[..<c])
            guard let p = Int(rest[rest.index(after: c)...]) else { throw Invalid(description: "--ice-server: \(rule)") }
            port = p
        }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace || $0 == "/" }), (1...65535).contains(port) else {
            throw Invalid(description: "--ice-server: \(rule)")
        }
        return IceServer(kind: kind, host: host, port: port, transport: transport)
    }

    private var hostPort: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    /// As a browser's `RTCIceServer.urls` takes it.
    public var description: String { "\(kind.rawValue):\(hostPort)" + (transport.map { "?transport=\($0)" } ?? "") }

    public var isTURN: Bool { kind != .stun }

    /// As webrtcbin's `stun-server` / `turn-server` take it (`stun://HOST:PORT`, `turn://USER:PASS@HOST:PORT`), the
    /// user and password escaped (a TURN REST user name holds a ':', its password '/', '+', '=').
    public func gstURI(user: String? = nil, password: String? = nil) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let escape = { (s: String) in s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s }
        let login = user.map { escape($0) + ":" + escape(password ?? "") + "@" } ?? ""
        return "\(kind.rawValue)://\(login)\(hostPort)" + (transport.map { "?transport=\($0)" } ?? "")
    }
}

/// The candidates of an SDP (`a=candidate:` lines), what a session that failed ICE says it tried, and the public
/// address added for a 1:1 NAT (`--ice-public-ip`, as Janus's `nat_1_1_mapping`).
public enum IceCandidates {
    /// `host 10.0.0.2:51234 udp`, one per candidate, in the SDP's order (no `a=end-of-candidates`).
    public static func summary(of sdp: String) -> [String] {
        sdp.split(whereSeparator: \.isNewline).compactMap { line in
            guard line.hasPrefix("a=candidate:") else { return nil }
            let f = line.split(separator: " ")
            guard f.count >= 8, let typ = f.firstIndex(of: "typ"), typ + 1 < f.count else { return nil }
            return "\(f[typ + 1]) \(f[4]):\(f[5]) \(f[2].lowercased())"
        }
    }

    /// The SDP with, after each host candidate on a private IPv4 address, the same candidate at `publicIP` (a new
    /// foundation, a priority one lower): a viewer outside the NAT reaches the port the NAT forwards. The private ones
    /// stay, for viewers inside.
    public static func addingPublic(_ publicIP: String, to sdp: String) -> String {
        var out: [String] = []
        let lines = sdp.components(separatedBy: "\r\n")
        for line in lines {
            out.append(line)
            guard line.hasPrefix("a=candidate:") else { continue }
            var f = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 8, let typ = f.firstIndex(of: "typ"), typ + 1 < f.count, f[typ + 1] == "host",
                  f[4] != publicIP, isIPv4(f[4]), let priority = UInt32(f[3]), priority > 0 else { continue }
            f[0] = f[0] + "9"
            f[3] = String(priority - 1)
            f[4] = publicIP
            out.append(f.joined(separator: " "))
        }
        return out.joined(separator: "\r\n")
    }

    public static func isIPv4(_ s: String) -> Bool {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }
}
