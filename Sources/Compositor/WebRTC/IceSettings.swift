import Crypto
import Foundation

/// NAT traversal for WebRTC viewers: the STUN and TURN servers (`--ice-server`), the shared secret TURN logins are
/// made with (`--turn-secret`), and the public address of a 1:1 NAT (`--ice-public-ip`).
///
/// TURN logins are made the coturn way (`use-auth-secret`, the TURN REST API): a user name that says until when it
/// holds (`EXPIRY:LABEL`, seconds since 1970) and a password that is the base64 HMAC-SHA1 of that name under the
/// secret. Each page and each viewer's webrtcbin gets its own, for `loginLifetime`; the secret never leaves this
/// process, and no TURN password that lasts reaches a browser.
public struct IceSettings: Sendable, Equatable {
    public var servers: [IceServer] = []
    public var turnSecret: String?
    public var publicIP: String?
    /// How long a TURN login made now holds (coturn checks the expiry in the user name at allocation).
    public var loginLifetime: TimeInterval = 12 * 3600

    public init(servers: [IceServer] = [], turnSecret: String? = nil, publicIP: String? = nil) {
        self.servers = servers
        self.turnSecret = turnSecret
        self.publicIP = publicIP
    }

    public var isEmpty: Bool { servers.isEmpty && publicIP == nil }

    /// The TURN REST login for `label`, valid from `now` for `loginLifetime`; nil without a secret.
    public func turnLogin(label: String, now: Date = Date()) -> (user: String, password: String)? {
        guard let turnSecret else { return nil }
        return Self.turnLogin(secret: turnSecret, label: label, expires: now.addingTimeInterval(loginLifetime))
    }

    public static func turnLogin(secret: String, label: String, expires: Date) -> (user: String, password: String) {
        let user = "\(Int(expires.timeIntervalSince1970)):\(label)"
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Data(user.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return (user, Data(mac).base64EncodedString())
    }

    /// What a page's `RTCPeerConnection` is given (`iceServers`), with a TURN login of its own.
    public struct BrowserServer: Codable, Sendable, Equatable {
        public var urls: [String]
        public var username: String?
        public var credential: String?
    }

    public func browserServers(label: String, now: Date = Date()) -> [BrowserServer] {
        let login = turnLogin(label: label, now: now)
        return servers.map { s in
            s.isTURN ? BrowserServer(urls: [s.description], username: login?.user, credential: login?.password)
                : BrowserServer(urls: [s.description])
        }
    }
}
