import Compositor
import Foundation
import Testing
import TestSupport

/// One way a page goes wrong: its HTML, what the run is given, what is done to it once it shows, and the words the
/// `widgetFailed` event must carry.
struct HostilePage: Sendable, CustomStringConvertible {
    var name: String
    var html: String
    var args: [String] = []
    var action: Action = .none
    var reason: String
    /// A page that cannot come back (a server that never answers) is expected to fail again after its restart.
    var recovers = true

    enum Action: Sendable { case none, killWebProcess, deleteAndReload, stopPageProcess }

    var description: String { name }

    static let all: [HostilePage] = [
        HostilePage(name: "a script that never returns",
                    html: "<body style='background:#008080'><script>setTimeout(() => { for (;;) {} }, 1500)</script>",
                    reason: "does not answer"),
        HostilePage(name: "memory until the limit",
                    html: """
                        <body style='background:#008080'><script>
                        const kept = [];
                        setTimeout(() => setInterval(() => kept.push(new Uint8Array(64 << 20).fill(7)), 150), 1500);
                        </script>
                        """,
                    args: ["--web-memory-limit", "700"], reason: "over --web-memory-limit"),
        // (wpesrc 1.22 then often crashes the page's own process: SIGSEGV reading the dead web process's buffer.)
        HostilePage(name: "its web process killed", html: "<body style='background:#008080'>",
                    action: .killWebProcess, reason: "the page|its process ended"),
        HostilePage(name: "a page that navigates away",
                    html: "<body style='background:#008080'><script>setTimeout(() => { location.href = 'about:blank'; }, 1500)</script>",
                    reason: "went to about:blank", recovers: false),
        HostilePage(name: "a page that goes missing", html: "<body style='background:#008080'>",
                    action: .deleteAndReload, reason: "answered 404"),
        // As a crash handler holds a process (every thread stopped while it writes its report), while WebKit's own
        // processes go on answering: a call bigger than a pipe holds once waited forever, with every status and
        // Ctrl-C behind it.
        HostilePage(name: "its process stopped, sent more than a pipe holds", html: "<body style='background:#008080'>",
                    action: .stopPageProcess, reason: "its process"),
    ]
}

extension EndToEnd {
    @Suite(.serialized) struct HostileWebPageTests {
        /// Each way a page can go wrong, with a viewer probing the stream all along: the stream loses no frame, the
        /// page is taken down (`widgetFailed` with the reason) and started again (`widgetRecovered`), and `status`
        /// says so.
        @Test(arguments: HostilePage.all)
        func aPageThatGoesWrongNeverTakesTheStreamWithIt(page: HostilePage) throws {
            let dir = try TempDir()
            let file = try dir.write("page.html", "<!doctype html>" + page.html)
            let scene = try webScene(dir, size: "320x180", web: "source: page.html")
            let (p, url) = try startLive([scene, "--size", "320x180"] + page.args)
            let c = try #require(controlURL(p), "\(p.allOutput)"), u = try #require(url)
            let events = try EventStream(client: ControlClient.local(base: c))
            defer { events.close() }
            #expect(waitForPixel(c, dir, 100, 60) { near($0, (0, 128, 128)) } != nil, "the page showed")
            let watcher = try startWatcher(u, scene: scene)
            switch page.action {
            case .none: break
            case .killWebProcess:
                // This run's only: the web process in the session of this pipcompose's page process.
                let page = try tool(["pgrep", "-P", String(p.process.processIdentifier), "-f", "web-page"])
                let session = try #require(page.out.split(separator: "\n").first.map(String.init), "no page process: \(page.err)")
                let killed = try tool(["pkill", "-9", "-s", session, "-f", "WPEWebProcess"])
                #expect(killed.status == 0, "no web process to kill: \(killed.err)")
            case .deleteAndReload:
                try FileManager.default.removeItem(atPath: file)
                #expect(try ctl(c, ["web", "page", "reload"]).status == 0)
            case .stopPageProcess:
                let page = try tool(["pgrep", "-P", String(p.process.processIdentifier), "-f", "web-page"])
                let pid = try #require(page.out.split(separator: "\n").first.flatMap { Int32($0) }, "no page process: \(page.err)")
                #expect(kill(pid, SIGSTOP) == 0)
                let data = try JSONSerialization.data(withJSONObject: ["big": String(repeating: "x", count: 300_000)])
                let body = try JSONSerialization.data(withJSONObject: ["call": "update", "data": String(decoding: data, as: UTF8.self)])
                let (status, answer) = http("POST", c + "/v1/web/page", body: body)
                #expect(status >= 400, "the call is answered, and not as done: \(status) \(String(decoding: answer, as: UTF8.self))")
            }
            let failed = events.next(timeout: 60) { $0.type == "widgetFailed" }
            let reason = failed?.details["reason"] ?? ""
            #expect(page.reason.split(separator: "|").contains { reason.contains($0) }, "\(String(describing: failed))\n\(p.allOutput)")
            if page.action == .deleteAndReload { _ = try dir.write("page.html", "<!doctype html>" + page.html) }
            if page.recovers {
                #expect(events.next(timeout: 60) { $0.type == "widgetRecovered" } != nil, "\(p.allOutput)")
            } else {
                // Started again and failing again: the backoff goes on, the stream with it.
                #expect(events.next(timeout: 60) { $0.type == "widgetFailed" } != nil, "\(p.allOutput)")
            }
            #expect((webStatus(c)["restarts"] as? Int ?? 0) >= 1)
            let watched = try stopWatcher(watcher)
            #expect(watched.int("frames") > 0 && watched.int("dropped") == 0 && watched.int("repeated") == 0
                    && watched.int("unreadable") == 0, "\(watched.total)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// A page whose server never answers: it is taken down after --web-load-timeout and tried again with
        /// backoff, while the picture goes on.
        @Test func aPageThatNeverLoadsIsTriedAgain() throws {
            let dir = try TempDir()
            // A server that takes connections and never answers them.
            let silent = try LiveProcess("/usr/bin/python3", ["-c", """
                import socket, sys, time
                s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(16)
                print(s.getsockname()[1], flush=True)
                kept = []
                while True:
                    c, _ = s.accept(); kept.append(c)
                """])
            defer { silent.signal(SIGKILL) }
            let port = try #require(silent.waitForLine(timeout: 10) { Int($0) != nil })
            let scene = try webScene(dir, size: "320x180", web: "source: \"http://127.0.0.1:\(port)/\"")
            let (p, _) = try startLive([scene, "--size", "320x180", "--web-load-timeout", "3"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let events = try EventStream(client: ControlClient.local(base: c))
            defer { events.close() }
            let first = events.next(timeout: 60) { $0.type == "widgetFailed" }
            #expect(first?.details["reason"]?.contains("did not finish loading within 3 s") == true, "\(p.allOutput)")
            #expect(events.next(timeout: 60) { $0.type == "widgetFailed" } != nil, "tried again")
            #expect(statusJSON(c)["state"] as? String == "playing")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }
    }
}
