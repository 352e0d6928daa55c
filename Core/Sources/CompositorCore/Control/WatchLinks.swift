import Foundation

/// Watch links: tokens that let a viewer watch (the page in watch mode, WHEP, the HLS ladder, RTSP) and nothing
/// more, each made, listed and revoked on its own, apart from the control token, which drives.
///
/// `run` makes the first one (the link it prints); `POST /v1/links` (`ctl link create`) makes more, with an
/// expiry and a label; `DELETE /v1/links/ID` revokes one. A revoked or expired link stays listed (so a viewer who
/// tries it is told why), and those who watch through it are sent away by the session (`onEnd`).
///
/// `@unchecked Sendable`: `links` and `observers` are behind `lock`.
public final class WatchLinks: @unchecked Sendable {
    public struct Link: Sendable, Equatable {
        /// Short and not secret: what `ctl link list` shows and `ctl link revoke` takes.
        public let id: String
        /// The secret a viewer's URL carries (48 hex digits).
        public let token: String
        public let label: String?
        public let created: Date
        public let expires: Date?
        public internal(set) var revoked: Date?

        /// Live at `now`: not revoked, not past its expiry.
        public func isLive(at now: Date) -> Bool { revoked == nil && (expires.map { now < $0 } ?? true) }
    }

    /// What a token is, when it is a watch link's.
    public enum Lookup: Equatable {
        case live(Link)
        case revoked(Link)
        case expired(Link)
    }

    /// The longest expiry a link may be given (a year); a link that must outlive that is made without one.
    public static let longestExpiry: TimeInterval = 366 * 86400

    /// The most links live at once, and how many ended ones stay listed (see above).
    public let mostLive: Int
    public let endedKept: Int

    private let lock = NSLock()
    private var links: [Link] = []
    private var made = 0
    private var observers: [@Sendable (Link) -> Void] = []
    private var makers: [@Sendable (Link) -> Void] = []
    private let clock: @Sendable () -> Date

    /// `now`: injected time (tests move it); the system's clock otherwise.
    public init(now: @escaping @Sendable () -> Date = { Date() }, mostLive: Int = 1000, endedKept: Int = 200) {
        clock = now
        self.mostLive = mostLive
        self.endedKept = endedKept
    }

    public var now: Date { clock() }

    /// Makes a link, live at once; `expiresIn` seconds from now (nil: until revoked or the run ends).
    @discardableResult
    public func create(label: String? = nil, expiresIn: TimeInterval? = nil) throws(ControlError) -> Link {
        if let expiresIn, !(expiresIn > 0 && expiresIn <= Self.longestExpiry) {
            throw .bad("a link's expiry is a time from now between 1 s and 366 days (e.g. 90s, 45m, 2h, 7d), got "
                       + "\(expiresIn) s; leave it out for a link that lasts until it is revoked")
        }
        if let label, label.count > 100 || label.contains(where: { $0.isNewline }) {
            throw .bad("a link's label is one line of at most 100 characters")
        }
        let at = clock()
        lock.lock()
        let live = links.count(where: { $0.isLive(at: at) })
        guard live < mostLive else {
            lock.unlock()
            throw .conflict("\(live) watch links are live, the most a run keeps: revoke one first "
                            + "(`pipcompose ctl link list`, then `ctl link revoke ID`), or give links an expiry")
        }
        made += 1
        let link = Link(id: "w\(made)", token: ControlToken.random(), label: label?.isEmpty == true ? nil : label,
                        created: at, expires: expiresIn.map { at.addingTimeInterval($0) })
        links.append(link)
        lock.unlock()
        for observer in lock.withLock({ makers }) { observer(link) }
        return link
    }

    /// Revokes the link `id`: it lets nobody in from now on, and those it let in are sent away (`onEnd`). Revoking
    /// a revoked link changes nothing; an unknown id is refused.
    @discardableResult
    public func revoke(_ id: String) throws(ControlError) -> Link {
        let at = clock()
        lock.lock()
        guard let i = links.firstIndex(where: { $0.id == id }) else {
            lock.unlock()
            throw .notFound("no watch link '\(id)'; `pipcompose ctl link list` shows them")
        }
        let first = links[i].revoked == nil
        if first { links[i].revoked = at }
        let link = links[i]
        forgetTheOldestEnded(at: at)
        lock.unlock()
        if first { notify(link) }
        return link
    }

    /// What `token` is, compared in constant time with every link's (which link it matched does not show in the
    /// time either).
    public func lookup(token: String) -> Lookup? {
        let at = clock()
        let all = lock.withLock { links }
        var found: Link?
        for link in all where ControlAccess.same(token, link.token) { found = link }
        guard let found else { return nil }
        if found.revoked != nil { return .revoked(found) }
        return found.isLive(at: at) ? .live(found) : .expired(found)
    }

    /// Every link, in the order made.
    public var all: [Link] { lock.withLock { links } }

    /// The link `id`.
    public func link(_ id: String) -> Link? { lock.withLock { links.first { $0.id == id } } }

    /// Whether the link `id` lets anyone in now.
    public func isLive(_ id: String) -> Bool { link(id)?.isLive(at: clock()) ?? false }

    /// Calls `observer` with each link that lets viewers in, those made so far first, then each as it is made.
    public func onMade(_ observer: @escaping @Sendable (Link) -> Void) {
        let live = lock.withLock { () -> [Link] in
            makers.append(observer)
            return links
        }.filter { $0.isLive(at: clock()) }
        for link in live { observer(link) }
    }

    /// Calls `observer` with each link that stops letting viewers in: revoked at once, expired when `sweep` finds it.
    public func onEnd(_ observer: @escaping @Sendable (Link) -> Void) { lock.withLock { observers.append(observer) } }

    /// Tells of the links that expired since the last sweep (the session sweeps once a second).
    public func sweep() {
        let at = clock()
        let ended = lock.withLock { () -> [Link] in
            var ended: [Link] = []
            for i in links.indices where links[i].revoked == nil && !links[i].isLive(at: at) && !swept.contains(links[i].id) {
                swept.insert(links[i].id)
                ended.append(links[i])
            }
            return ended
        }
        for link in ended { notify(link) }
        if !ended.isEmpty { lock.withLock { forgetTheOldestEnded(at: at) } }
    }

    private var swept: Set<String> = []

    /// Past `endedKept` ended links whose end was told (revoked, or swept after expiring), forgets those that ended
    /// first. Called with `lock` held.
    private func forgetTheOldestEnded(at now: Date) {
        let told = links.filter { $0.revoked != nil || swept.contains($0.id) }
        guard told.count > endedKept else { return }
        let endedAt = { (l: Link) in l.revoked ?? l.expires ?? now }
        let forget = Set(told.sorted { endedAt($0) < endedAt($1) }.prefix(told.count - endedKept).map(\.id))
        links.removeAll { forget.contains($0.id) }
        swept.subtract(forget)
    }

    private func notify(_ link: Link) {
        for observer in lock.withLock({ observers }) { observer(link) }
    }

    /// `90s`, `45m`, `2h`, `7d` (or plain seconds) → seconds.
    public static func duration(_ text: String) throws(ControlError) -> TimeInterval {
        let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        let unit = t.last.flatMap { units[$0] }
        guard let n = Double(unit == nil ? t : String(t.dropLast())), n.isFinite, n > 0 else {
            throw .bad("invalid expiry '\(text)': expected a time such as 90s, 45m, 2h or 7d")
        }
        return n * (unit ?? 1)
    }
}
