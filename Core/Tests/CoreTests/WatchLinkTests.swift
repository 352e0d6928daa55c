import Foundation
import Testing
import TestSupport
@testable import CompositorCore

/// A clock a test moves.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var t = Date(timeIntervalSince1970: 1_800_000_000)
    var now: Date { lock.withLock { t } }
    func advance(_ seconds: TimeInterval) { lock.withLock { t += seconds } }
}

/// The ids a link observer was told, in order.
final class Told: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [String] = []
    var ids: [String] { lock.withLock { seen } }
    func add(_ id: String) { lock.withLock { seen.append(id) } }
}

/// Watch links: what each kind of token may do on each surface of the control port, and a link's life.
@Suite struct WatchLinkTests {
    let clock = TestClock()
    let links: WatchLinks
    let access: ControlAccess

    init() {
        let clock = self.clock
        links = WatchLinks(now: { clock.now })
        access = ControlAccess(token: "owner", hosts: ControlAccess.hosts(listeningOn: "127.0.0.1", extra: []),
                               origins: [], links: links)
    }

    func decide(_ method: String, _ path: String, token: String?, query: Bool = false,
                _ headers: [String: String] = [:]) -> ControlAccess.Decision {
        var all = headers
        if let token, !query { all["authorization"] = "Bearer \(token)" }
        if ["POST", "PATCH"].contains(method), all["content-type"] == nil {
            all["content-type"] = path.hasPrefix("/v1/whep") && !path.hasSuffix("/window") ? "application/sdp" : "application/json"
        }
        let fields = all
        return access.decide(ControlAccess.Request(method: method, path: path, host: "127.0.0.1:8555",
                                                   queryToken: query ? token : nil, header: { fields[$0] }))
    }

    func status(_ d: ControlAccess.Decision) -> Int {
        switch d {
        case .refuse(let r): r.status
        case .preflight: 204
        case .pass: 200
        case .ask: 0
        }
    }

    /// Every surface, as a request a client of it sends.
    static let surfaces: [(name: String, method: String, path: String, watch: Bool)] = [
        ("page", "GET", "/", true),
        ("access", "GET", "/v1/access", true),
        ("ICE servers", "GET", "/v1/ice", true),
        ("now playing", "GET", "/v1/nowplaying", true),
        ("its cover", "GET", "/v1/nowplaying/artwork", true),
        ("WHEP offer", "POST", "/v1/whep", true),
        ("WHEP end", "DELETE", "/v1/whep/v1", true),
        ("WHEP window", "POST", "/v1/whep/v1/window", true),
        ("status", "GET", "/v1/status", false),
        ("events", "GET", "/v1/events", false),
        ("frame.png", "GET", "/v1/frame.png", false),
        ("metrics", "GET", "/metrics", false),
        ("resize", "POST", "/v1/resize", false),
        ("pause", "POST", "/v1/pause", false),
        ("outputs", "POST", "/v1/outputs", false),
        ("outputs stop", "DELETE", "/v1/outputs", false),
        ("widgets", "PATCH", "/v1/widgets/memo", false),
        ("web call", "POST", "/v1/web/page", false),
        ("links", "GET", "/v1/links", false),
        ("link create", "POST", "/v1/links", false),
        ("link revoke", "DELETE", "/v1/links/w1", false),
        ("WHEP trickle", "PATCH", "/v1/whep/v1", false),
        ("unknown", "GET", "/v1/nothing", false),
    ]

    @Test func theOwnerDrivesEverySurfaceAndAWatchLinkOnlyWatches() throws {
        let link = try links.create(label: "grandma")
        for s in Self.surfaces {
            #expect(decide(s.method, s.path, token: "owner") == .pass(.drive), "\(s.name)")
            let d = decide(s.method, s.path, token: link.token)
            if s.watch {
                #expect(d == .pass(.watch(link: link.id)), "\(s.name)")
            } else {
                #expect(status(d) == 403, "\(s.name): \(d)")
                if case .refuse(let r) = d { #expect(r.message.contains("only watches") && r.message.contains("control token")) }
            }
            #expect(status(decide(s.method, s.path, token: nil)) == 401, "\(s.name) without a token")
            #expect(status(decide(s.method, s.path, token: "owner", ["origin": "http://evil.example"])) == 403,
                    "\(s.name) from a page of another origin")
            #expect(status(decide(s.method, s.path, token: link.token, ["origin": "http://evil.example"])) == 403)
        }
        // The page and its event stream take the token in the query; the HLS ladder in the path.
        #expect(decide("GET", "/", token: link.token, query: true) == .pass(.watch(link: link.id)))
        #expect(decide("GET", "/hls/\(link.token)/master.m3u8", token: nil) == .pass(.watch(link: link.id)))
        #expect(decide("GET", "/hls/\(link.token)/640x360/segment00001.ts", token: nil) == .pass(.watch(link: link.id)))
        #expect(decide("GET", "/hls/owner/master.m3u8", token: nil) == .pass(.drive))
        #expect(status(decide("GET", "/v1/\(link.token)/status", token: nil)) == 401)
        #expect(status(decide("POST", "/hls/\(link.token)/master.m3u8", token: nil)) == 403)
    }

    @Test func aRevokedOrExpiredLinkLetsNobodyInAndSaysWhy() throws {
        let kept = try links.create()
        let revoked = try links.create(label: "tv")
        let brief = try links.create(expiresIn: 60)
        let told = Told()
        links.onEnd { told.add($0.id) }
        try links.revoke(revoked.id)
        try links.revoke(revoked.id)
        #expect(told.ids == [revoked.id], "told once")
        let d = decide("GET", "/", token: revoked.token, query: true)
        #expect(status(d) == 401)
        if case .refuse(let r) = d { #expect(r.message.contains("revoked")) }
        #expect(decide("POST", "/v1/whep", token: brief.token) == .pass(.watch(link: brief.id)))
        clock.advance(59)
        links.sweep()
        #expect(links.isLive(brief.id))
        clock.advance(1)
        #expect(!links.isLive(brief.id))
        let e = decide("POST", "/v1/whep", token: brief.token)
        #expect(status(e) == 401)
        if case .refuse(let r) = e { #expect(r.message.contains("expired")) }
        links.sweep()
        links.sweep()
        #expect(told.ids == [revoked.id, brief.id], "an expiry is told once, at the sweep after it")
        #expect(decide("GET", "/hls/\(kept.token)/master.m3u8", token: nil) == .pass(.watch(link: kept.id)))
        #expect(links.all.map(\.id) == [kept.id, revoked.id, brief.id])
        #expect(Set([kept.token, revoked.token, brief.token, "owner"]).count == 4)
        #expect(throws: ControlError.self) { try links.revoke("w99") }
    }

    @Test func aLinksExpiryAndLabelAreChecked() throws {
        #expect(throws: ControlError.self) { try links.create(expiresIn: 0) }
        #expect(throws: ControlError.self) { try links.create(expiresIn: -5) }
        #expect(throws: ControlError.self) { try links.create(expiresIn: .infinity) }
        #expect(throws: ControlError.self) { try links.create(expiresIn: 400 * 86400) }
        #expect(throws: ControlError.self) { try links.create(label: "two\nlines") }
        #expect(try WatchLinks.duration("2h") == 7200)
        #expect(try WatchLinks.duration("90s") == 90 && WatchLinks.duration("45m") == 2700 && WatchLinks.duration("7d") == 604800)
        #expect(try WatchLinks.duration("30") == 30)
        for bad in ["", "h", "2x", "-1h", "nanh", "1e400"] {
            #expect(throws: ControlError.self, "\(bad)") { try WatchLinks.duration(bad) }
        }
    }

    /// A run that makes a link per viewer for days must not keep every link it ever made: each request's token is
    /// compared with every link's, and the metrics keep a series per link listed.
    @Test func theLinksKeptAreBoundedAndTheOldestEndedAreForgottenFirst() throws {
        let clock = self.clock
        let links = WatchLinks(now: { clock.now }, mostLive: 4, endedKept: 3)
        let told = Told()
        links.onEnd { told.add($0.id) }
        let made = try (0..<4).map { _ in try links.create() }
        do {
            try links.create()
            Issue.record("a fifth live link was made past the most kept")
        } catch {
            #expect(error.status == 409 && error.message.contains("revoke one first"), "\(error.message)")
        }
        try links.revoke(made[0].id)
        let brief = try links.create(expiresIn: 10)
        clock.advance(1)
        try links.revoke(made[1].id)
        clock.advance(1)
        try links.revoke(made[2].id)
        #expect(links.all.count == 5, "three ended, two live: all kept")
        clock.advance(10)
        #expect(links.all.count == 5, "an expiry not yet told keeps every link: its viewers are sent away at the sweep")
        links.sweep()
        #expect(told.ids == [made[0].id, made[1].id, made[2].id, brief.id], "every end told before anything is forgotten")
        #expect(links.all.map(\.id) == [made[1].id, made[2].id, made[3].id, brief.id], "the first to end is forgotten")
        #expect(links.lookup(token: made[0].token) == nil)
        #expect(links.lookup(token: made[1].token) == .revoked(links.link(made[1].id)!))
        #expect(links.lookup(token: brief.token) == .expired(links.link(brief.id)!))
        #expect(throws: ControlError.self) { try links.revoke(made[0].id) }
        try links.revoke(made[3].id)
        #expect(links.all.map(\.id) == [made[2].id, made[3].id, brief.id],
                "the one that ended first goes, by when it ended: revoked at 1 s before one that expired at 10 s")
        for _ in 0..<4 { try links.create() }
        #expect(links.all.count == 7)
    }

    @Test func withoutAControlTokenAWatchLinkStillOnlyWatches() throws {
        let open = ControlAccess(token: nil, hosts: ControlAccess.hosts(listeningOn: "127.0.0.1", extra: []), links: links)
        let link = try links.create()
        let fields = ["authorization": "Bearer \(link.token)", "content-type": "application/json"]
        let d = open.decide(ControlAccess.Request(method: "POST", path: "/v1/resize", host: "127.0.0.1",
                                                  queryToken: nil, header: { fields[$0] }))
        #expect(status(d) == 403)
        let none = open.decide(ControlAccess.Request(method: "POST", path: "/v1/resize", host: "127.0.0.1",
                                                     queryToken: nil, header: { $0 == "content-type" ? "application/json" : nil }))
        #expect(none == .pass(.drive), "no token on loopback drives, by the user's choice")
    }
}
