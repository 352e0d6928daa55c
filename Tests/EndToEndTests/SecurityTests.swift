import Compositor
import Foundation
import Testing
import TestSupport

/// The port of a control URL such as `http://127.0.0.1:40123`.
func port(of control: String) -> Int { URLComponents(string: control)?.port ?? 0 }

/// Reads owner events until `last` matches; returns the types of the events before it (nil: it never came).
func eventTypes(_ events: EventStream, until last: (EventStream.Event) -> Bool) -> [String]? {
    var seen: [String] = []
    while let e = events.next(timeout: 30) {
        if last(e) { return seen }
        seen.append(e.type)
    }
    return nil
}

/// The control API's refusals so far, all statuses, from its /metrics (read as the owner).
func refusedCount(_ control: String) -> Int {
    let text = String(decoding: http("GET", control + "/metrics").1, as: UTF8.self)
    return text.split(separator: "\n").filter { $0.hasPrefix("pipcompose_control_refused_total{") }
        .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
}

/// What changes state: none of these may come from a request the owner did not make.
let stateEvents: Set<String> = ["resized", "paused", "playing", "skipped", "willStart", "didStart", "failedToStart",
                                "widgetUpdated", "willStop", "didStop"]

extension EndToEnd {
    @Suite(.serialized) struct SecurityTests {
        /// A page from another origin, in headless Chromium, tries what any web page can: simple requests (no-cors
        /// fetch with a text/plain JSON body, a text/plain form), an <img> of the picture, an EventSource, a CORS
        /// read, a PATCH. Nothing changes (no file written over or made, no resize, pause, push or widget edit,
        /// by the owner's own event stream), and nothing is read. With the default token, and without one
        /// (`--no-control-token`), where the Origin, fetch-metadata and content-type checks alone must hold.
        @Test(arguments: [false, true]) func aHostilePageInABrowserChangesAndReadsNothing(noToken: Bool) throws {
            let dir = try TempDir()
            let precious = try dir.write("precious.mp4", "the user's own file")
            let formTarget = dir.file("form.mp4")
            let (p, _) = try startLive(["--record-dir", dir.path] + (noToken ? ["--no-control-token"] : []))
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let events = try EventStream(client: ControlClient.local(base: c))
            defer { events.close() }

            let refusedBefore = refusedCount(c)
            let r = try tool(["/usr/bin/python3", fixture("hostile_page.py"), c, "--record", precious, "--form-record", formTarget],
                             timeout: 150)
            #expect(r.status == 0, "\(r.err)")
            let seen = try #require(try? JSONSerialization.jsonObject(with: Data((r.out.split(separator: "\n").last ?? "").utf8))
                                    as? [String: String], "\(r.out)\n\(r.err)")
            // The page's requests reached the API and were refused there (so this test can fail): four simple
            // requests, the form, the image, the event stream, the read; the PATCH's preflight too.
            #expect(refusedCount(c) - refusedBefore >= 9, "\(p.allOutput)")
            #expect(seen["image"] == "error", "the picture is not shown to another page: \(seen)")
            #expect(seen["events"]?.hasPrefix("error after 0") == true, "\(seen)")
            #expect(seen["statusRead"]?.hasPrefix("threw") == true, "\(seen)")
            #expect(seen["widgetPatch"]?.hasPrefix("threw") == true, "\(seen)")

            // The owner's own request is a barrier: every event before it came from the page's attempts.
            #expect(try ctl(c, ["resize", "480x270"]).status == 0)
            let before = try #require(eventTypes(events) { $0.type == "resized" && $0.details["width"] == "480" },
                                      "\(p.allOutput)")
            #expect(Set(before).isDisjoint(with: stateEvents), "\(before)")
            #expect(try String(contentsOfFile: precious, encoding: .utf8) == "the user's own file")
            #expect(!FileManager.default.fileExists(atPath: formTarget))
            let outputs = (statusJSON(c)["outputs"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(outputs == ["rtsp"], "no recording or push started: \(outputs)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// Requests with a foreign Host (DNS rebinding), a foreign Origin, a text/plain JSON body, a cross-site
        /// fetch of the picture, no Host, no token, a wrong token: each refused with its status and a message,
        /// while a probing viewer watches the stream lose nothing and the size stays.
        @Test func refusedRequestsLeaveTheStreamAlone() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let (p, url) = try startLive([scene])
            let c = try #require(controlURL(p)), u = try #require(url)
            let port = port(of: c)
            let token = try ownerToken(c)
            let watcher = try startWatcher(u, scene: scene)
            let auth = "Authorization: Bearer \(token)\n"
            let resize = #"{"size":"320x180"}"#
            let cases: [(String, String, Int, String)] = [
                ("rebinding", "GET /v1/status HTTP/1.1\nHost: evil.example:\(port)\n" + auth, 403, "--allow-host"),
                ("rebinding, picture", "GET /v1/frame.png HTTP/1.1\nHost: evil.example\n" + auth, 403, "not this machine"),
                ("origin", "POST /v1/resize HTTP/1.1\nHost: 127.0.0.1:\(port)\nOrigin: http://evil.example\n"
                    + "Content-Type: application/json\n" + auth, 403, "--allow-origin"),
                ("text/plain", "POST /v1/resize HTTP/1.1\nHost: 127.0.0.1:\(port)\nContent-Type: text/plain\n" + auth,
                 415, "application/json"),
                ("no type", "POST /v1/resize HTTP/1.1\nHost: 127.0.0.1:\(port)\n" + auth, 415, "application/json"),
                ("cross-site image", "GET /v1/frame.png HTTP/1.1\nHost: 127.0.0.1:\(port)\nSec-Fetch-Site: cross-site\n"
                    + "Sec-Fetch-Mode: no-cors\nSec-Fetch-Dest: image\n" + auth, 403, "other sites"),
                ("no host", "GET /v1/status HTTP/1.0\n" + auth, 400, "Host"),
                ("no token", "POST /v1/resize HTTP/1.1\nHost: 127.0.0.1:\(port)\nContent-Type: application/json\n",
                 401, "token"),
                ("wrong token", "POST /v1/resize HTTP/1.1\nHost: localhost:\(port)\nContent-Type: application/json\n"
                    + "Authorization: Bearer \(token.dropLast())x\n", 401, "token"),
                ("events, no token", "GET /v1/events HTTP/1.1\nHost: 127.0.0.1:\(port)\n", 401, "token"),
                ("metrics, no token", "GET /metrics HTTP/1.1\nHost: 127.0.0.1:\(port)\n", 401, "token"),
            ]
            for (name, head, status, words) in cases {
                let answer = rawHTTP(port: port, head, body: head.hasPrefix("POST") ? resize : "")
                #expect(answer.status == status, "\(name): \(answer.text)")
                #expect(answer.text.contains(words), "\(name): \(answer.text)")
                #expect(!answer.text.contains("image/png"), "\(name)")
            }
            // The owner's request, byte for byte the same but for the checks, is obeyed.
            let ok = rawHTTP(port: port, "GET /v1/status HTTP/1.1\nHost: 127.0.0.1:\(port)\n" + auth)
            #expect(ok.status == 200 && ok.text.contains("\"width\":640"), "\(ok.text)")
            let watched = try stopWatcher(watcher)
            #expect(watched.int("frames") > 0 && watched.int("dropped") == 0 && watched.int("repeated") == 0
                    && watched.int("unreadable") == 0, "\(watched.total)")
            #expect(statusJSON(c)["width"] as? Int == 640)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// The token is written where only its user can read it; that user's `ctl` finds it with no flags; the file
        /// goes when the run ends. `ctl page` prints the page's URL with it.
        @Test func theOwnersCtlFindsTheTokenAndTheFileGoesAtTheEnd() throws {
            let (p, _) = try startLive([])
            let c = try #require(controlURL(p))
            let line = try #require(p.stdout.first { $0.hasPrefix("token ") }, "\(p.allOutput)")
            let file = String(line.dropFirst("token ".count).split(separator: " ").first ?? "")
            #expect(file.hasSuffix("/pipcompose/control-\(port(of: c)).token"), "\(line)")
            var st = stat()
            #expect(stat(file, &st) == 0 && st.st_mode & 0o777 == 0o600 && st.st_uid == getuid())
            #expect(stat((file as NSString).deletingLastPathComponent, &st) == 0 && st.st_mode & 0o777 == 0o700)
            let status = try ctl(c, ["status"])
            #expect(status.status == 0 && status.stdout.contains("\"width\":640"), "\(status.stderr)")
            let page = try ctl(c, ["page"])
            #expect(page.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == c + "/?token=" + (try ownerToken(c)))
            let wrong = try ctl(c, ["status", "--token", "nope"])
            #expect(wrong.status != 0 && wrong.stderr.contains("401") && wrong.stderr.contains("token"), "\(wrong.stderr)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            #expect(!FileManager.default.fileExists(atPath: file))
        }

        /// Another account on the machine reaches the loopback port but not the token: refused. Given the token, it
        /// is obeyed, so the token is what keeps it out. Needs root to make the account (CI runs as root).
        @Test(.enabled(if: getuid() == 0, "makes a system account: needs root"))
        func anotherAccountIsRefused() throws {
            let user = "pipcompose-test-other"
            if try tool(["id", user]).status != 0 {
                let made = try tool(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user])
                #expect(made.status == 0, "\(made.err)")
            }
            defer { _ = try? tool(["userdel", user]) }
            // A copy of the binary the other account can reach whatever the checkout's permissions.
            let bin = try TempDir()
            chmod(bin.path, 0o755)
            try FileManager.default.copyItem(atPath: binary, toPath: bin.file("pipcompose"))
            let (p, _) = try startLive([])
            let c = try #require(controlURL(p))
            let token = try ownerToken(c)
            let file = ControlToken.path(port: port(of: c))
            let theirs = try tool(["runuser", "-u", user, "--", bin.file("pipcompose"), "ctl", "status", "--control", c])
            #expect(theirs.status != 0 && theirs.err.contains("401"), "\(theirs.out)\(theirs.err)")
            let read = try tool(["runuser", "-u", user, "--", "cat", file])
            #expect(read.status != 0 && !read.out.contains(token), "\(read.err)")
            let given = try tool(["runuser", "-u", user, "--", bin.file("pipcompose"), "ctl", "status", "--control", c,
                                  "--token", token])
            #expect(given.status == 0, "\(given.err)")
            #expect(try ctl(c, ["status"]).status == 0, "the owner's ctl, no flags")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// `ctl record start` keeps to `--record-dir` and never replaces a file unless told to.
        @Test func recordingsOverTheAPIKeepToTheirFolderAndSpareFiles() throws {
            let dir = try TempDir(), outside = try TempDir()
            let existing = try dir.write("take.mp4", "an earlier take")
            let (p, _) = try startLive(["--record-dir", dir.path])
            let c = try #require(controlURL(p))
            let out = try ctl(c, ["record", "start", outside.file("x.mp4")])
            #expect(out.status != 0 && out.stderr.contains("outside the allowed folders")
                    && out.stderr.contains(dir.path), "\(out.stderr)")
            let there = try ctl(c, ["record", "start", existing])
            #expect(there.status != 0 && there.stderr.contains("--overwrite"), "\(there.stderr)")
            #expect(try String(contentsOfFile: existing, encoding: .utf8) == "an earlier take")
            let over = try ctl(c, ["record", "start", existing, "--overwrite"])
            #expect(over.status == 0, "\(over.stderr)")
            #expect(p.waitForFrames("record:\(existing)", atLeast: 30))
            #expect(try ctl(c, ["record", "stop", existing]).status == 0)
            #expect(try decodedFrames(existing) ?? 0 >= 30)
            #expect(!FileManager.default.fileExists(atPath: outside.file("x.mp4")))
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// The options that open the API are refused where they would open it too far; `--metrics-open` lets
        /// Prometheus in without the token and nothing else.
        @Test func optionsThatOpenTheAPIAreBounded() throws {
            for (args, words) in [
                (["--no-control-token", "--control", "0.0.0.0:0"], "loopback only"),
                (["--no-control-token", "--control-token", "x"], "contradict"),
                (["--metrics-open", "--control", "0.0.0.0:0"], "loopback only"),
                (["--allow-origin", "evil.example"], "--allow-origin takes an origin"),
                (["--allow-origin", "http://a.example/path"], "no path"),
                (["--allow-host", "http://a.example"], "--allow-host takes"),
                (["--record-dir", "/nonexistent/folder"], "not an existing folder"),
            ] {
                let r = try pipcompose(["run", "--duration", "1"] + args)
                #expect(r.status != 0 && r.stderr.contains(words), "\(args): \(r.stderr)")
            }
            let (p, _) = try startLive(["--metrics-open"])
            let c = try #require(controlURL(p))
            let port = port(of: c)
            let metrics = rawHTTP(port: port, "GET /metrics HTTP/1.1\nHost: 127.0.0.1:\(port)\n")
            #expect(metrics.status == 200 && metrics.text.contains("pipcompose_frames_rendered_total"), "\(metrics.text)")
            #expect(rawHTTP(port: port, "GET /v1/status HTTP/1.1\nHost: 127.0.0.1:\(port)\n").status == 401)
            #expect(rawHTTP(port: port, "GET /metrics HTTP/1.1\nHost: evil.example\n").status == 403)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }
    }
}
