import Compositor
import Foundation
import Testing
import TestSupport

extension EndToEnd {
    /// `--auth-hook` against a real run and a real hook (`auth_hook.py`, an HTTP service of the deployment's): who
    /// gets in is the hook's word, the owner is never asked about, a watch link goes to it by id, answers are kept,
    /// and a hook that is stuck or gone refuses with 503 and holds nobody else up.
    @Suite(.serialized) struct AuthHookTests {
        @Test func theHookDecidesWhoElseGetsIn() throws {
            let dir = try TempDir()
            let hook = try LiveProcess("/usr/bin/python3", [fixture("auth_hook.py"), "--allow", "alice:watch:Alice",
                                                            "--allow", "bob:watch", "--allow", "carol:drive", "--links",
                                                            "--hang", "stuck"])
            defer { hook.signal(SIGTERM); _ = hook.waitForExit(timeout: 10) }
            let listening = try #require(hook.waitForLine(timeout: 20) { $0.hasPrefix("listening ") }, "\(hook.allOutput)")
            let hookURL = "http://127.0.0.1:\(listening.dropFirst("listening ".count))/auth"
            let (p, _) = try startLive([try timecodeScene(dir), "--webrtc", "--hls", dir.file("ladder"),
                                        "--auth-hook", hookURL, "--auth-hook-cache", "300"])
            defer { p.signal(SIGINT); _ = p.waitForExit(timeout: 30) }
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let owner = try ownerToken(c)
            let page = try #require(pageURL(p), "\(p.allOutput)")
            let watch = try #require(URLComponents(string: page)?.queryItems?.first { $0.name == "token" }?.value)
            let asked = { () -> [[String: Any]] in
                hook.stdout.filter { $0.hasPrefix("asked ") }.map { jsonObject(Data($0.dropFirst("asked ".count).utf8)) }
            }
            /// The status and the message of an answer.
            func text(_ r: (status: Int, body: Data)) -> String {
                "\(r.status) " + ((jsonObject(r.body)["error"] as? [String: Any])?["message"] as? String
                                  ?? String(decoding: r.body, as: UTF8.self))
            }

            // The owner drives without the hook being asked.
            #expect(ask("GET", c + "/v1/status", token: owner).status == 200)
            #expect(ask("GET", c + "/v1/links", token: owner).status == 200)
            #expect(asked().isEmpty, "\(asked())")

            // Alice may watch: a WHEP session of her own, which bob (let watch too) cannot end; the page is told she watches.
            let offer = try Data(contentsOf: chromiumOffer)
            let hers = ask("POST", c + "/v1/whep", token: "alice", body: offer, type: "application/sdp")
            #expect(hers.status == 201, "\(text(hers))")
            let sessions = ((statusJSON(c)["webrtc"] as? [String: Any])?["sessions"] as? [[String: Any]]) ?? []
            let id = try #require(sessions.first?["id"] as? String, "\(sessions)")
            #expect(ask("DELETE", c + "/v1/whep/\(id)", token: "bob").status == 403)
            let access = jsonObject(ask("GET", c + "/v1/access", token: "alice").body)
            #expect(access["can"] as? String == "watch" && access["link"] as? String == "hook:Alice", "\(access)")
            // What the hook said no to comes back with its word.
            let resize = ask("POST", c + "/v1/resize", token: "alice", body: Data(#"{"size": "480x270"}"#.utf8))
            #expect(resize.status == 403 && text(resize).contains("alice may not drive here"), "\(text(resize))")
            #expect(ask("GET", c + "/v1/status", token: "carol").status == 200, "carol drives")
            #expect(ask("GET", c + "/v1/status", token: nil).status == 403, "nobody")

            // An HLS player: its token goes to the hook, the path it is told leaves it out; the answer is kept, so
            // the player's next requests do not ask again.
            for _ in 0..<3 { #expect(ask("GET", c + "/hls/alice/master.m3u8", token: nil).status == 200) }
            let hls = asked().filter { $0["protocol"] as? String == "hls" }
            #expect(hls.count == 1, "\(hls)")
            #expect(hls.first?["path"] as? String == "/hls/{token}/master.m3u8" && hls.first?["token"] as? String == "alice"
                    && hls.first?["action"] as? String == "watch" && hls.first?["remote"] as? String == "127.0.0.1",
                    "\(hls)")

            // A watch link is asked about by its id; neither its token nor the owner's ever reaches the hook.
            #expect(ask("GET", c + "/hls/\(watch)/master.m3u8", token: nil).status == 200)
            #expect(asked().contains { $0["link"] as? String == "w1" && $0["token"] == nil }, "\(asked())")
            #expect(!hook.allOutput.contains(watch) && !hook.allOutput.contains(owner))

            // A stuck hook: that request is refused with 503 once it waited its time, and the others go on meanwhile.
            let stuck = Latest<(status: Int, body: Data)>((0, Data()))
            let waiting = Thread { stuck.update { $0 = ask("GET", c + "/v1/access", token: "stuck") } }
            waiting.start()
            #expect(hook.waitForLine(timeout: 20) { $0.contains("\"stuck\"") } != nil)
            #expect(ask("GET", c + "/v1/access", token: "bob").status == 200)
            #expect(poll(until: { stuck.value.status != 0 }, timeout: 30))
            #expect(stuck.value.status == 503 && text(stuck.value).contains("did not answer"), "\(text(stuck.value))")

            // The hook gone: whoever it was not asked about yet is refused, saying so; the owner and what it already
            // allowed go on.
            hook.signal(SIGTERM)
            _ = hook.waitForExit(timeout: 10)
            let gone = ask("GET", c + "/v1/access", token: "dave")
            #expect(gone.status == 503, "\(text(gone))")
            #expect(text(gone).contains("the auth hook \(hookURL) did not answer"), "\(text(gone))")
            #expect(ask("GET", c + "/v1/status", token: owner).status == 200)
            #expect(ask("GET", c + "/hls/alice/master.m3u8", token: nil).status == 200)
            #expect(p.allOutput.contains("control: refused"), "the refusals are logged")
            #expect(!p.allOutput.contains("alice"), "a token in the log: \(p.allOutput)")
        }

        @Test func aBadHookIsRefusedBeforeTheStart() throws {
            for (bad, says) in [("ftp://127.0.0.1/auth", "http:// or https:// URL"), ("127.0.0.1:9000", "http:// or https:// URL"),
                                ("http://user:pw@127.0.0.1/", "http:// or https:// URL")] {
                let r = try tool([binary, "run", "--auth-hook", bad, "--size", "320x180"])
                #expect(r.status != 0 && r.err.contains(says), "\(bad): \(r.err)")
            }
            let r = try tool([binary, "run", "--auth-hook", "http://127.0.0.1:1/", "--auth-hook-cache", "-1"])
            #expect(r.status != 0 && r.err.contains("--auth-hook-cache"), "\(r.err)")
        }
    }
}
