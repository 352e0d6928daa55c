import Foundation
import Metrics
import NIOCore

/// Who watches through each watch link: the WHEP sessions it opened, the HLS players that fetched through it in the
/// last `playerWindow` seconds (by address: HLS has no session). When a link ends (revoked, or expired), the control
/// server ends its WHEP sessions, and the session disconnects its RTSP viewers (`LiveSession.admit(watchLinks:)`).
///
/// `@unchecked Sendable`: the maps and `recorded` are behind `lock`.
public final class LinkViewers: @unchecked Sendable {
    /// An HLS player that fetched nothing for this long is gone (players fetch a playlist every segment).
    public static let playerWindow: TimeInterval = 10

    private let lock = NSLock()
    private var sessions: [String: String] = [:]
    private var players: [String: [String: Date]] = [:]
    private let now: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> Date = { Date() }) { self.now = now }

    /// A WHEP session `id` opened through `link`; those no longer `open` are forgotten (the map stays as large as the
    /// sessions there are).
    public func noteSession(_ id: String, link: String, open: Set<String>) {
        lock.withLock {
            sessions = sessions.filter { open.contains($0.key) }
            sessions[id] = link
        }
    }

    /// The link that opened WHEP session `id` (nil: the owner's, or none).
    public func link(ofSession id: String) -> String? { lock.withLock { sessions[id] } }

    public func sessionEnded(_ id: String) { _ = lock.withLock { sessions.removeValue(forKey: id) } }

    /// The sessions `link` opened that are still open (`open`: the WHEP service's live ids).
    public func sessions(of link: String, open: Set<String>) -> [String] {
        lock.withLock {
            sessions = sessions.filter { open.contains($0.key) }
            return sessions.filter { $0.value == link }.map(\.key).sorted()
        }
    }

    public func notePlayer(link: String, from address: SocketAddress?) {
        let key = address?.ipAddress ?? "?"
        let at = now(), since = at.addingTimeInterval(-Self.playerWindow)
        lock.withLock {
            // Players gone for the window are forgotten as others come, and so are the links (or the identities an
            // auth hook let in, one each) nobody plays through now: as many entries as players now.
            players = players.compactMapValues { seen in
                let recent = seen.filter { $0.value > since }
                return recent.isEmpty ? nil : recent
            }
            players[link, default: [:]][key] = at
        }
    }

    /// Links with a player seen within the window, as held.
    var linksWithPlayers: Int { lock.withLock { players.count } }

    /// HLS players seen through `link` within the window.
    public func players(of link: String) -> Int {
        let since = now().addingTimeInterval(-Self.playerWindow)
        return lock.withLock {
            players[link] = players[link]?.filter { $0.value > since }
            return players[link]?.count ?? 0
        }
    }


    /// What watches through `link` now.
    public struct Counts: Codable, Sendable, Equatable {
        public var webrtc: Int
        public var hls: Int
        public var rtsp: Int
        public var total: Int { webrtc + hls + rtsp }
    }

    /// `pipcompose_link_viewers{link, via}` for every link listed (0 once it has ended), as `/metrics` is scraped;
    /// the series of a link no longer listed (`WatchLinks` forgets the oldest ended ones) are removed.
    public func record(_ links: [WatchLinks.Link], openSessions: Set<String>, rtsp: [String: Int]) {
        let ids = Set(links.map(\.id))
        let gone = lock.withLock { () -> Set<String> in
            defer { recorded = ids }
            return recorded.subtracting(ids)
        }
        for id in gone {
            for via in Self.ways { Self.gauge(link: id, via: via).destroy() }
        }
        for link in links {
            let c = counts(of: link.id, openSessions: openSessions, rtsp: rtsp)
            for (via, n) in zip(Self.ways, [c.webrtc, c.hls, c.rtsp]) { Self.gauge(link: link.id, via: via).record(n) }
        }
    }

    private static let ways = ["webrtc", "hls", "rtsp"]
    private var recorded: Set<String> = []

    private static func gauge(link: String, via: String) -> Gauge {
        Gauge(label: "pipcompose_link_viewers", dimensions: [("link", link), ("via", via)])
    }

    /// `rtsp`: the RTSP server's count of viewers playing through each link.
    public func counts(of link: String, openSessions: Set<String>, rtsp: [String: Int]) -> Counts {
        Counts(webrtc: sessions(of: link, open: openSessions).count, hls: players(of: link), rtsp: rtsp[link] ?? 0)
    }
}
