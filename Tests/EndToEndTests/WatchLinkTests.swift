import Compositor
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// One request to `url` with `token` as the bearer (none: nil) and `origin` when given; the status (0: unreachable).
func ask(_ method: String, _ url: String, token: String?, body: Data? = nil, type: String = "application/json",
         origin: String? = nil) -> (status: Int, body: Data) {
    guard let u = URL(string: url) else { return (0, Data()) }
    var req = URLRequest(url: u, timeoutInterval: 20)
    req.httpMethod = method
    if let token { req.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    if let origin { req.setValue(origin, forHTTPHeaderField: "Origin") }
    if body != nil || ["POST", "PATCH"].contains(method) { req.setValue(type, forHTTPHeaderField: "Content-Type") }
    req.httpBody = body
    let done = DispatchSemaphore(value: 0)
    let got = Latest<(Int, Data)>((0, Data()))
    URLSession.shared.dataTask(with: req) { d, r, _ in
        got.update { $0 = ((r as? HTTPURLResponse)?.statusCode ?? 0, d ?? Data()) }
        done.signal()
    }.resume()
    done.wait()
    return got.value
}

/// The JSON object in `data` (empty when it is none).
func jsonObject(_ data: Data) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
}

extension EndToEnd {
    /// Watch links against a real run: the URLs `run` prints carry one and never the control token; each kind of
    /// token does on each surface what it may (the rule table is Core's `WatchLinkTests`; here the routes and the
    /// answers behind them, over HTTP); revoking a link ends its sessions and only its own.
    @Suite(.serialized) struct WatchLinkTests {
        /// A run with the page, WHEP and an HLS ladder, and its owner's token.
        func start(_ dir: TempDir) throws -> (p: LiveProcess, control: String, owner: String, watch: String) {
            let (p, _) = try startLive([try timecodeScene(dir), "--webrtc", "--hls", dir.file("ladder"),
                                        "--record-dir", dir.path])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let owner = try ownerToken(c)
            let page = try #require(pageURL(p), "\(p.allOutput)")
            let watch = try #require(URLComponents(string: page)?.queryItems?.first { $0.name == "token" }?.value)
            return (p, c, owner, watch)
        }

        /// `ctl link create` with `args`: the link as the owner sees it.
        func create(_ c: String, _ args: [String] = []) throws -> [String: Any] {
            let r = try ctl(c, ["link", "create"] + args)
            #expect(r.status == 0, "\(r.stderr)")
            return jsonObject(Data(r.stdout.utf8))
        }

        @Test func eachTokenDoesWhatItMayOnEverySurface() throws {
            let dir = try TempDir()
            let (p, c, owner, watch) = try start(dir)
            defer { p.signal(SIGINT); _ = p.waitForExit(timeout: 30) }
            // What run printed for viewers carries the watch link, never the control token.
            #expect(watch != owner && !p.stdout.joined().contains(owner), "\(p.allOutput)")
            #expect(p.stdout.contains { $0.hasPrefix("webrtc ") && $0.contains("watch link w1") }, "\(p.allOutput)")
            let players = try #require(p.stdout.first { $0.contains("players: http") }, "\(p.allOutput)")
            #expect(players.hasSuffix("/hls/\(watch)/master.m3u8"), "\(players)")

            let tv = try create(c, ["--expires", "1h", "--label", "tv"])
            let tvToken = try #require(tv["token"] as? String)
            #expect(tv["label"] as? String == "tv" && tv["expires"] != nil && tv["live"] as? Bool == true, "\(tv)")
            #expect((tv["page"] as? String)?.hasSuffix("/?token=\(tvToken)") == true, "\(tv)")
            let gone = try create(c)
            let goneToken = try #require(gone["token"] as? String), goneID = try #require(gone["id"] as? String)
            #expect(try ctl(c, ["link", "revoke", goneID]).status == 0)
            let brief = try create(c, ["--expires", "1s"])
            let briefToken = try #require(brief["token"] as? String)
            #expect(poll(until: { ask("GET", c + "/v1/access", token: briefToken).status == 401 }, timeout: 30),
                    "a link of a second still let its holder in")

            // The list names every link, revoked and expired ones as such.
            let list = try ctl(c, ["link", "list"])
            let links = (try? JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]) ?? []
            #expect(links.map { $0["id"] as? String ?? "" } == ["w1", "w2", "w3", "w4"], "\(list.stdout)")
            #expect(links.map { $0["live"] as? Bool ?? true } == [true, true, false, false], "\(list.stdout)")
            #expect(links[2]["revoked"] != nil, "\(list.stdout)")
            // The HLS ladder has a playlist to read before the cells are tried.
            #expect(poll(until: { ask("GET", c + "/hls/\(owner)/master.m3u8", token: nil).status == 200 }, timeout: 60),
                    "\(p.allOutput)")
            let offer = try Data(contentsOf: chromiumOffer)
            struct Cell { let name, method, path: String; let body: Data?; let type: String; let watches: Bool }
            let json = { (s: String) in Data(s.utf8) }
            let cells = [
                Cell(name: "page", method: "GET", path: "/", body: nil, type: "", watches: true),
                Cell(name: "access", method: "GET", path: "/v1/access", body: nil, type: "", watches: true),
                Cell(name: "WHEP", method: "POST", path: "/v1/whep", body: offer, type: "application/sdp", watches: true),
                Cell(name: "status", method: "GET", path: "/v1/status", body: nil, type: "", watches: false),
                Cell(name: "frame.png", method: "GET", path: "/v1/frame.png", body: nil, type: "", watches: false),
                Cell(name: "metrics", method: "GET", path: "/metrics", body: nil, type: "", watches: false),
                Cell(name: "resize", method: "POST", path: "/v1/resize", body: json(#"{"size": "480x270"}"#),
                     type: "application/json", watches: false),
                Cell(name: "pause", method: "POST", path: "/v1/pause", body: json("{}"), type: "application/json", watches: false),
                Cell(name: "links", method: "GET", path: "/v1/links", body: nil, type: "", watches: false),
                Cell(name: "link create", method: "POST", path: "/v1/links", body: json("{}"), type: "application/json",
                     watches: false),
            ]
            // HLS players carry the token in the path, and nothing else.
            for (token, expected) in [(owner, 200), (watch, 200), (tvToken, 200), (goneToken, 401), (briefToken, 401),
                                      (strangerToken(like: watch), 401)] {
                #expect(ask("GET", c + "/hls/\(token)/master.m3u8", token: nil).status == expected, "HLS with \(token)")
            }
            for cell in cells {
                let url = c + cell.path
                let asOwner = ask(cell.method, url, token: owner, body: cell.body, type: cell.type)
                #expect((200..<300).contains(asOwner.status), "\(cell.name) as the owner: \(asOwner.status)")
                for token in [watch, tvToken] {
                    let r = ask(cell.method, url, token: token, body: cell.body, type: cell.type)
                    let said = String(decoding: r.body, as: UTF8.self)
                    if cell.watches {
                        #expect((200..<300).contains(r.status), "\(cell.name) with a watch link: \(r.status) \(said)")
                    } else {
                        #expect(r.status == 403 && said.contains("only watches"), "\(cell.name) with a watch link: \(r.status) \(said)")
                    }
                }
                for (who, token) in [("revoked", goneToken), ("expired", briefToken), ("no token", nil as String?)] {
                    let r = ask(cell.method, url, token: token, body: cell.body, type: cell.type)
                    #expect(r.status == 401, "\(cell.name), \(who): \(r.status)")
                }
                let foreign = ask(cell.method, url, token: owner, body: cell.body, type: cell.type,
                                  origin: "http://evil.example")
                #expect(foreign.status == 403, "\(cell.name) from a page of another origin: \(foreign.status)")
            }
            // What the issue found a watch link could do: start a push to any URL, write a file, resize for everyone.
            for body in [#"{"push": "rtmp://127.0.0.1:1/live/stolen"}"#, #"{"record": "stolen.mp4"}"#] {
                let r = ask("POST", c + "/v1/outputs", token: watch, body: json(body))
                #expect(r.status == 403, "\(body): \(r.status)")
            }
            #expect(!FileManager.default.fileExists(atPath: dir.file("stolen.mp4")))
            #expect(ask("GET", c + "/v1/events", token: watch).status == 403)
            let access = jsonObject(ask("GET", c + "/v1/access", token: tvToken).body)
            #expect(access["can"] as? String == "watch" && access["link"] as? String == tv["id"] as? String, "\(access)")
            #expect(jsonObject(ask("GET", c + "/v1/access", token: owner).body)["can"] as? String == "drive")
            let noID = try ctl(c, ["link", "revoke", "w99"])
            #expect(noID.status != 0 && noID.stderr.contains("no watch link 'w99'"), "\(noID.stderr)")
            let badExpiry = try ctl(c, ["link", "create", "--expires", "soon"])
            #expect(badExpiry.status != 0 && badExpiry.stderr.contains("90s, 45m, 2h or 7d"), "\(badExpiry.stderr)")
            let tooLong = ask("POST", c + "/v1/links", token: owner, body: json(#"{"expires": "400d"}"#))
            #expect(tooLong.status == 400, "\(tooLong.status)")
        }

        /// Two links each open a WHEP session: one cannot end or re-lay the other's, the owner can; revoking one
        /// ends its session (the server counts it gone) and leaves the other's.
        @Test func revokingALinkEndsItsSessionsAndOnlyThose() throws {
            let dir = try TempDir()
            let (p, c, owner, watch) = try start(dir)
            defer { p.signal(SIGINT); _ = p.waitForExit(timeout: 30) }
            let other = try create(c, ["--label", "other"])
            let otherToken = try #require(other["token"] as? String), otherID = try #require(other["id"] as? String)
            let offer = try Data(contentsOf: chromiumOffer)
            func open(_ token: String) -> String? {
                let r = ask("POST", c + "/v1/whep", token: token, body: offer, type: "application/sdp")
                return r.status == 201 ? sessions().last : nil
            }
            func sessions() -> [String] {
                let s = statusJSON(c)
                return ((s["webrtc"] as? [String: Any])?["sessions"] as? [[String: Any]])?.compactMap { $0["id"] as? String } ?? []
            }
            let mine = try #require(open(watch), "\(p.allOutput)")
            let theirs = try #require(open(otherToken), "\(p.allOutput)")
            #expect(mine != theirs)
            let window = Data(#"{"width": 320, "height": 180}"#.utf8)
            #expect(ask("POST", c + "/v1/whep/\(theirs)/window", token: watch, body: window).status == 403)
            #expect(ask("DELETE", c + "/v1/whep/\(theirs)", token: watch).status == 403)
            #expect(Set(sessions()) == [mine, theirs])
            let listed = { () -> [String: [String: Any]] in
                let r = (try? ctl(c, ["link", "list"]))?.stdout ?? ""
                let all = (try? JSONSerialization.jsonObject(with: Data(r.utf8)) as? [[String: Any]]) ?? []
                return Dictionary(all.map { ($0["id"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
            }
            #expect((listed()[otherID]?["viewers"] as? [String: Any])?["webrtc"] as? Int == 1, "\(listed())")
            let inStatus = (statusJSON(c)["links"] as? [[String: Any]] ?? []).first { $0["id"] as? String == otherID }
            #expect((inStatus?["viewers"] as? [String: Any])?["webrtc"] as? Int == 1, "\(String(describing: inStatus))")
            let metrics = String(decoding: ask("GET", c + "/metrics", token: owner).body, as: UTF8.self)
            #expect(metrics.contains("pipcompose_link_viewers{link=\"\(otherID)\",via=\"webrtc\"} 1")
                    || metrics.contains("pipcompose_link_viewers{via=\"webrtc\",link=\"\(otherID)\"} 1"),
                    "\(metrics.split(separator: "\n").filter { $0.contains("link_viewers") })")
            #expect(try ctl(c, ["link", "revoke", otherID]).status == 0)
            #expect(poll(until: { !sessions().contains(theirs) }, timeout: 10), "the revoked link's session stayed")
            #expect(sessions().contains(mine))
            #expect(p.waitForLine { $0.contains("watch link \(otherID) revoked: ending its 1 WebRTC session") } != nil,
                    "\(p.allOutput)")
            #expect(ask("POST", c + "/v1/whep", token: otherToken, body: offer, type: "application/sdp").status == 401)
            // The owner ends any session.
            #expect(ask("DELETE", c + "/v1/whep/\(mine)", token: owner).status == 200)
            #expect(poll(until: { sessions().isEmpty }, timeout: 10))
        }

        /// `--rtsp-user viewer` without a password: RTSP viewers log in with a watch link's token. A stranger, the
        /// control token and a revoked link get 401; revoking a link disconnects the ffmpeg playing through it and
        /// leaves the one playing through another link; the list counts each link's RTSP viewers.
        @Test func rtspViewersLogInWithAWatchLinkAndARevokedOneIsDisconnected() throws {
            let dir = try TempDir()
            let (p, url) = try startLive([try timecodeScene(dir), "--rtsp-user", "viewer"])
            defer { p.signal(SIGINT); _ = p.waitForExit(timeout: 30) }
            let u = try #require(url, "\(p.allOutput)"), c = try #require(controlURL(p))
            let port = try #require(URLComponents(string: u)?.port)
            let line = try #require(p.stdout.first { $0.hasPrefix("rtsp viewers log in as viewer") }, "\(p.allOutput)")
            let first = try #require(line.components(separatedBy: "(w1: ").last?.components(separatedBy: ")").first)
            let tv = try create(c, ["--label", "tv"])
            let second = try #require(tv["token"] as? String), secondID = try #require(tv["id"] as? String)
            let login = { (password: String) in "rtsp://viewer:\(password)@127.0.0.1:\(port)/pip" }
            func width(_ url: String) throws -> (String, String) {
                let r = try tool(["ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-show_entries", "stream=width",
                                  "-of", "csv=p=0", url])
                return (r.out.trimmingCharacters(in: .whitespacesAndNewlines), r.err)
            }
            for refused in [u, login(try ownerToken(c)), login(strangerToken(like: first))] {
                let (w, err) = try width(refused)
                #expect(w.isEmpty && err.contains("401"), "\(refused): \(w) \(err)")
            }
            #expect(try width(login(first)).0 == "640")
            let player = { (password: String) in
                try LiveProcess("/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-rtsp_transport", "tcp", "-i", login(password),
                                                    "-f", "null", "-"])
            }
            let kept = try player(first), cut = try player(second)
            defer { kept.signal(SIGTERM); _ = kept.waitForExit(timeout: 10) }
            let rtspViewers = { (id: String) -> Int in
                let r = (try? ctl(c, ["link", "list"]))?.stdout ?? ""
                let all = (try? JSONSerialization.jsonObject(with: Data(r.utf8)) as? [[String: Any]]) ?? []
                let link = all.first { $0["id"] as? String == id }
                return (link?["viewers"] as? [String: Any])?["rtsp"] as? Int ?? -1
            }
            #expect(poll(until: { rtspViewers("w1") == 1 && rtspViewers(secondID) == 1 }, timeout: 30),
                    "w1: \(rtspViewers("w1")), \(secondID): \(rtspViewers(secondID))")
            #expect(try ctl(c, ["link", "revoke", secondID]).status == 0)
            #expect(cut.waitForExit(timeout: 20) != nil, "the revoked link's player still plays")
            #expect(p.waitForLine { $0.contains("watch link \(secondID) revoked: disconnecting its 1 RTSP viewer") } != nil,
                    "\(p.allOutput)")
            #expect(!kept.hasExited && rtspViewers("w1") == 1, "the other link's player was cut too: \(kept.allOutput)")
            let (w, err) = try width(login(second))
            #expect(w.isEmpty && err.contains("401"), "a revoked link logs in: \(w) \(err)")
        }

        /// The page a watch link opens plays the picture and shows no controls, nor "resize the shared picture";
        /// the owner's page shows both.
        @Test func aWatchLinksPageShowsTheVideoAndNothingThatDrives() throws {
            let dir = try TempDir()
            let (p, _, _, _) = try start(dir)
            defer { p.signal(SIGINT); _ = p.waitForExit(timeout: 30) }
            let seen = try browserViewer(try #require(pageURL(p)), ["--seconds", "2"])
            #expect(seen["error"] == nil, "\(seen)\n\(p.allOutput)")
            #expect(((seen["stats"] as? [String: Any])?["readable"] as? Int ?? 0) > 30, "\(seen)")
            #expect(seen["controls"] as? Bool == false && seen["followOptions"] as? [String] == ["", "own"], "\(seen)")
            #expect((seen["pageError"] as? String ?? "").isEmpty, "\(seen)")
            let owner = try browserViewer(try ownerPageURL(p), ["--seconds", "1"])
            #expect(owner["controls"] as? Bool == true && owner["followOptions"] as? [String] == ["", "own", "shared"],
                    "\(owner)")
            // Nothing either browser asked was refused (it used to ask /favicon.ico, without the token, each time).
            #expect(!p.allOutput.contains("control: refused"), "\(p.allOutput)")
        }
    }
}
