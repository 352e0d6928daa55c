import Foundation
import Testing
import TestSupport
@testable import CompositorCore

/// `--auth-hook`: who is asked about, what the hook is told, what its answers mean and how long they are kept.
@Suite struct AuthHookTests {
    let clock = TestClock()
    let links: WatchLinks
    let access: ControlAccess

    init() {
        let clock = self.clock
        links = WatchLinks(now: { clock.now })
        var a = ControlAccess(token: "owner", hosts: ControlAccess.hosts(listeningOn: "127.0.0.1", extra: []),
                              origins: [], links: links)
        a.asksHook = true
        access = a
    }

    func decide(_ method: String, _ path: String, token: String?, type: String? = nil) -> ControlAccess.Decision {
        var fields: [String: String] = [:]
        if let token { fields["authorization"] = "Bearer \(token)" }
        if let type { fields["content-type"] = type }
        let all = fields
        return access.decide(ControlAccess.Request(method: method, path: path, host: "127.0.0.1:8555", queryToken: nil,
                                                   header: { all[$0] }))
    }

    @Test func theOwnerIsNeverAskedAbout() {
        #expect(decide("GET", "/v1/status", token: "owner") == .pass(.drive))
        #expect(decide("POST", "/v1/resize", token: "owner", type: "application/json") == .pass(.drive))
        #expect(decide("GET", "/hls/owner/master.m3u8", token: nil) == .pass(.drive))
    }

    @Test func aTokenOfTheDeploymentsGoesToTheHookAsGivenWithWhatItAsks() {
        #expect(decide("POST", "/v1/whep", token: "alice", type: "application/sdp")
                == .ask(AuthHook.Question(action: "watch", protocol: "webrtc", method: "POST", path: "/v1/whep", token: "alice")))
        #expect(decide("POST", "/v1/resize", token: "alice", type: "application/json")
                == .ask(AuthHook.Question(action: "drive", protocol: "api", method: "POST", path: "/v1/resize", token: "alice")))
        #expect(decide("GET", "/", token: nil)
                == .ask(AuthHook.Question(action: "watch", protocol: "page", method: "GET", path: "/")))
        #expect(decide("GET", "/metrics", token: "alice")
                == .ask(AuthHook.Question(action: "drive", protocol: "metrics", method: "GET", path: "/metrics", token: "alice")))
        // An HLS player's token is not shown in the path the hook is told.
        #expect(decide("GET", "/hls/alice/640x360/segment00004.ts", token: nil)
                == .ask(AuthHook.Question(action: "watch", protocol: "hls", method: "GET",
                                          path: "/hls/{token}/640x360/segment00004.ts", token: "alice")))
        // What this process refuses on its own (a body that is not JSON) never reaches the hook.
        #expect(decide("POST", "/v1/resize", token: "alice", type: "text/plain") != .ask(
            AuthHook.Question(action: "drive", protocol: "api", method: "POST", path: "/v1/resize", token: "alice")))
    }

    @Test func aWatchLinkIsAskedAboutByItsIdAndAnEndedOneIsRefusedWithoutAsking() throws {
        let link = try links.create()
        #expect(decide("GET", "/hls/\(link.token)/master.m3u8", token: nil)
                == .ask(AuthHook.Question(action: "watch", protocol: "hls", method: "GET", path: "/hls/{token}/master.m3u8",
                                          link: link.id)))
        // What a watch link may not do is refused here, as without a hook.
        if case .refuse(let r) = decide("GET", "/v1/status", token: link.token) { #expect(r.status == 403) } else {
            Issue.record("a watch link reached the hook for what it may not do")
        }
        _ = try links.revoke(link.id)
        if case .refuse(let r) = decide("POST", "/v1/whep", token: link.token, type: "application/sdp") {
            #expect(r.status == 401)
        } else {
            Issue.record("a revoked link reached the hook")
        }
    }

    @Test func theHooksAnswers() {
        #expect(AuthHook.Answer.from(status: 204, body: Data()) == .allow(user: nil))
        #expect(AuthHook.Answer.from(status: 200, body: Data(#"{"user": "alice"}"#.utf8)) == .allow(user: "alice"))
        #expect(AuthHook.Answer.from(status: 200, body: Data("yes".utf8)) == .allow(user: nil))
        #expect(AuthHook.Answer.from(status: 403, body: Data(" not on weekends\n".utf8))
                == .refuse(status: 403, message: "not on weekends"))
        #expect(AuthHook.Answer.from(status: 302, body: Data()) == .refuse(status: 302, message: ""))
        #expect(AuthHook.Answer.from(status: 502, body: Data("bad gateway".utf8)) == .down("it answered 502: bad gateway"))
    }

    @Test func answersAreKeptAWhileByWhoAsksWhatFromWhere() {
        let clock = self.clock
        let cache = AuthHook.Cache(lifetime: 10, limit: 3, now: { clock.now })
        var segment = AuthHook.Question(action: "watch", protocol: "hls", method: "GET", path: "/hls/{token}/a.ts",
                                        token: "alice", remote: "10.0.0.2")
        cache.keep(.allow(user: nil), for: segment)
        segment.path = "/hls/{token}/b.ts"
        #expect(cache.answer(to: segment) == .allow(user: nil), "the next segment asks again")
        var elsewhere = segment
        elsewhere.remote = "10.0.0.3"
        #expect(cache.answer(to: elsewhere) == nil)
        var drive = segment
        drive.action = "drive"
        #expect(cache.answer(to: drive) == nil)
        cache.keep(.refuse(status: 403, message: "no"), for: drive)
        #expect(cache.answer(to: drive) == .refuse(status: 403, message: "no"))
        cache.keep(.down("refused"), for: elsewhere)
        #expect(cache.answer(to: elsewhere) == nil, "a hook that is down is asked again")
        clock.advance(10)
        #expect(cache.answer(to: segment) == nil && cache.answer(to: drive) == nil)
        // Bounded: the oldest go first.
        for i in 0..<5 {
            var q = segment
            q.token = "user\(i)"
            cache.keep(.allow(user: nil), for: q)
            clock.advance(1)
        }
        #expect(cache.count == 3)
        var first = segment, last = segment
        first.token = "user0"
        last.token = "user4"
        #expect(cache.answer(to: first) == nil && cache.answer(to: last) == .allow(user: nil))
    }

    @Test func whomTheHookLetWatchIsKnownByItsUserOrADigestOfItsToken() {
        #expect(AuthHook.watcher(user: "alice", token: "x", remote: nil) == "hook:alice")
        let a = AuthHook.watcher(user: nil, token: "secret-a", remote: nil)
        #expect(a.hasPrefix("hook:") && !a.contains("secret") && a != AuthHook.watcher(user: nil, token: "secret-b", remote: nil))
    }
}
