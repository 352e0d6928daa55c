import Foundation

/// A deployment's own users (`--auth-hook URL`): before a viewer or a caller that is not the owner is let in on the
/// control port, the hook is asked, as MediaMTX's `authHTTPAddress` and nginx-rtmp's `on_play` are. pipcompose
/// POSTs a `Question` as JSON; a 2xx answer lets that request in, any other refuses it, and a hook that does not
/// answer (or answers 5xx) refuses with 503 and says so. Answers are kept a short while (`Cache`), so that an HLS
/// player's every segment does not ask again.
///
/// The control token always drives without asking (a hook that is down never locks the owner out); a watch link is
/// asked about by its id, never its token; any other token is the deployment's own, and goes to the hook as given.
public enum AuthHook {
    /// What the hook is asked.
    public struct Question: Codable, Equatable, Hashable, Sendable {
        /// `watch` (the page, WHEP, the HLS ladder: what a watch link may do) or `drive` (anything else).
        public var action: String
        /// `page`, `webrtc`, `hls`, `metrics` or `api`.
        public var `protocol`: String
        public var method: String
        /// The request's path, an HLS token in it replaced by `{token}`.
        public var path: String
        /// The watch link the request came through (its id).
        public var link: String?
        /// A token this process does not know (the deployment's own); nil with none.
        public var token: String?
        /// The caller's address.
        public var remote: String?

        public init(action: String, protocol: String, method: String, path: String, link: String? = nil,
                    token: String? = nil, remote: String? = nil) {
            self.action = action
            self.protocol = `protocol`
            self.method = method
            self.path = path
            self.link = link
            self.token = token
            self.remote = remote
        }

        /// The question for a request to `path`, with what it carries.
        public static func about(method: String, path: String, link: String?, token: String?) -> Question {
            let action = WatchRules.allows(method: method, path: path) ? "watch" : "drive"
            var shown = path
            if let t = ControlAccess.hlsToken(in: path) {
                shown = "/hls/{token}" + path.dropFirst("/hls/".count + t.count)
            }
            return Question(action: action, protocol: kind(of: path), method: method, path: shown, link: link, token: token)
        }

        static func kind(of path: String) -> String {
            if path == "/" || path == "/v1/access" || path == "/v1/ice" { return "page" }
            if path.hasPrefix("/v1/whep") { return "webrtc" }
            if path.hasPrefix("/hls/") { return "hls" }
            if path == "/metrics" { return "metrics" }
            return "api"
        }

        /// What an answer is kept by: who asks what, from where (not the path: a player's segments share one).
        var key: String {
            [action, `protocol`, link ?? "", token ?? "", remote ?? ""].joined(separator: "\u{1}")
        }
    }

    /// What the hook said.
    public enum Answer: Equatable, Sendable {
        /// 2xx; `user` when its JSON body names one (`{"user": "alice"}`).
        case allow(user: String?)
        /// Another status: the hook's word, shown to the caller.
        case refuse(status: Int, message: String)
        /// No answer, or 5xx: the hook is down.
        case down(String)

        /// An HTTP answer of the hook's.
        public static func from(status: Int, body: Data) -> Answer {
            let text = String(decoding: body.prefix(300), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            switch status {
            case 200..<300:
                let user = (try? JSONDecoder().decode(Allowed.self, from: body))?.user
                return .allow(user: user.flatMap { $0.isEmpty || $0.count > 64 ? nil : $0 })
            case 500...:
                return .down("it answered \(status)" + (text.isEmpty ? "" : ": \(text)"))
            default:
                return .refuse(status: status, message: text)
            }
        }

        private struct Allowed: Decodable { var user: String? }
    }

    /// Answers kept for `lifetime` seconds by who asks what from where: allowances and refusals alike (a hook that is
    /// down is asked again next time). At most `limit` answers; the oldest go first.
    ///
    /// `@unchecked Sendable`: `answers` is behind `lock`.
    public final class Cache: @unchecked Sendable {
        public let lifetime: TimeInterval
        public let limit: Int
        private let clock: @Sendable () -> Date
        private let lock = NSLock()
        private var answers: [String: (answer: Answer, until: Date)] = [:]

        public init(lifetime: TimeInterval, limit: Int = 4096, now: @escaping @Sendable () -> Date = { Date() }) {
            self.lifetime = lifetime
            self.limit = limit
            clock = now
        }

        public func answer(to q: Question) -> Answer? {
            let now = clock()
            return lock.withLock {
                guard let kept = answers[q.key] else { return nil }
                guard now < kept.until else {
                    answers[q.key] = nil
                    return nil
                }
                return kept.answer
            }
        }

        public func keep(_ answer: Answer, for q: Question) {
            if case .down = answer { return }
            guard lifetime > 0 else { return }
            let now = clock()
            lock.withLock {
                if answers.count >= limit {
                    answers = answers.filter { now < $0.value.until }
                    while answers.count >= limit, let oldest = answers.min(by: { $0.value.until < $1.value.until }) {
                        answers[oldest.key] = nil
                    }
                }
                answers[q.key] = (answer, now.addingTimeInterval(lifetime))
            }
        }

        public var count: Int { lock.withLock { answers.count } }
    }

    /// The watch identity a caller the hook let watch is known by (its WHEP sessions are its own, as a link's are):
    /// `hook:USER` when the hook named one, else `hook:` and a digest of its token (or its address, with none).
    public static func watcher(user: String?, token: String?, remote: String?) -> String {
        if let user { return "hook:" + user }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 // FNV-1a: an id, not a secret (the token is never shown).
        for b in (token ?? remote ?? "").utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return "hook:" + String(h, radix: 16)
    }
}
