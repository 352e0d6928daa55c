import Foundation
import Testing
import TestSupport
@testable import CompositorCore

/// The control API's access rules, request by request, as a browser or another program would send them.
@Suite struct ControlAccessTests {
    let access = ControlAccess(token: "t0ken", hosts: ControlAccess.hosts(listeningOn: "127.0.0.1", extra: ["pip.lan"]),
                               origins: ["https://panel.example"])

    func request(_ method: String = "GET", _ path: String = "/v1/status", host: String? = "127.0.0.1:8555",
                 token: String? = "t0ken", query: String? = nil, _ headers: [String: String] = [:]) -> ControlAccess.Request {
        var all = headers
        if let token { all["authorization"] = "Bearer \(token)" }
        let fields = all
        return ControlAccess.Request(method: method, path: path, host: host, queryToken: query,
                                     header: { fields[$0.lowercased()] })
    }

    func status(_ d: ControlAccess.Decision) -> Int {
        switch d {
        case .refuse(let r): return r.status
        case .preflight: return 204
        case .pass: return 200
        case .ask: return 0
        }
    }

    @Test func theOwnerWithTheTokenPasses() {
        #expect(status(access.decide(request())) == 200)
        #expect(status(access.decide(request(host: "localhost:8555"))) == 200)
        #expect(status(access.decide(request(host: "[::1]:8555"))) == 200)
        #expect(status(access.decide(request(host: "127.0.0.2"))) == 200, "all of 127.0.0.0/8 is loopback")
        #expect(status(access.decide(request(host: "PIP.lan.:8555"))) == 200, "--allow-host, any case, a final dot")
        #expect(status(access.decide(request(token: nil, query: "t0ken"))) == 200, "?token= for a browser")
        #expect(status(access.decide(request("POST", "/v1/pause", ["content-type": "application/json"]))) == 200)
        #expect(status(access.decide(request("POST", "/v1/resize",
                                             ["content-type": "Application/JSON; charset=utf-8"]))) == 200)
    }

    @Test func aForeignHostIsRefusedBeforeAnythingElse() {
        // DNS rebinding: the attacker's name, now resolving to 127.0.0.1, and even with the right token.
        for host in ["evil.example:8555", "evil.example", "127.0.0.1.evil.example", "[::2]:8555", "0.0.0.0:8555"] {
            let d = access.decide(request(host: host))
            #expect(status(d) == 403, "\(host)")
            if case .refuse(let r) = d { #expect(r.message.contains("--allow-host"), "\(r.message)") }
        }
        #expect(status(access.decide(request(host: nil))) == 400)
        #expect(status(access.decide(request(host: ""))) == 400)
    }

    @Test func aForeignOriginIsRefusedAndTheOwnPageAndAllowedOnesPass() {
        for origin in ["http://evil.example", "null", "http://127.0.0.1:9999", "https://127.0.0.1:8555",
                       "http://localhost:8555", "file://"] {
            let d = access.decide(request("POST", "/v1/outputs", ["origin": origin, "content-type": "application/json"]))
            #expect(status(d) == 403, "\(origin)")
            if case .refuse(let r) = d { #expect(r.message.contains("--allow-origin"), "\(r.message)") }
        }
        // Refused without the token too: the origin is judged first, so a page learns nothing from the status.
        #expect(status(access.decide(request("POST", "/v1/pause", token: nil, ["origin": "http://evil.example"]))) == 403)
        #expect(status(access.decide(request("POST", "/v1/pause",
                                             ["origin": "http://127.0.0.1:8555", "content-type": "application/json"]))) == 200)
        #expect(status(access.decide(request("GET", "/v1/events", ["origin": "https://panel.example"]))) == 200)
        #expect(access.corsOrigin("https://panel.example") == "https://panel.example")
        #expect(access.corsOrigin("http://127.0.0.1:8555") == nil, "the own page needs no CORS")
        #expect(access.corsOrigin("http://evil.example") == nil)
    }

    @Test func requestsWithoutOriginFromOtherSitesAreRefusedButNavigationsAreNot() {
        // An <img src=…/v1/frame.png> on another site: no Origin, but Sec-Fetch-Site says where it comes from.
        let img = ["sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image"]
        #expect(status(access.decide(request("GET", "/v1/frame.png", img))) == 403)
        #expect(status(access.decide(request("GET", "/v1/frame.png", ["sec-fetch-site": "same-site"]))) == 403)
        let iframe = ["sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "iframe"]
        #expect(status(access.decide(request("GET", "/", iframe))) == 403)
        // A link followed to the page: the user sees it; without the token in the link, nothing is served.
        let link = ["sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document"]
        #expect(status(access.decide(request("GET", "/", token: nil, query: "t0ken", link))) == 200)
        #expect(status(access.decide(request("GET", "/", token: nil, link))) == 401)
        #expect(status(access.decide(request("POST", "/v1/pause", ["sec-fetch-site": "cross-site",
                                             "sec-fetch-mode": "navigate", "content-type": "application/json"]))) == 403,
                "a form posted across sites is no navigation the API serves")
        #expect(status(access.decide(request("GET", "/v1/status", ["sec-fetch-site": "same-origin"]))) == 200)
        #expect(status(access.decide(request("GET", "/v1/status", ["sec-fetch-site": "none"]))) == 200)
    }

    @Test func theTokenIsRequiredAndCompared() {
        #expect(status(access.decide(request(token: nil))) == 401)
        #expect(status(access.decide(request(token: "t0ke"))) == 401)
        #expect(status(access.decide(request(token: "t0ken0"))) == 401)
        #expect(status(access.decide(request(token: ""))) == 401)
        #expect(status(access.decide(request(token: nil, query: "wrong"))) == 401)
        #expect(status(access.decide(request(token: nil, ["authorization": "Basic dDBrZW4="]))) == 401)
        #expect(status(access.decide(request(token: nil, ["authorization": "bearer t0ken"]))) == 200)
        #expect(status(access.decide(request("GET", "/metrics", token: nil))) == 401)
        var open = access
        open.metricsOpen = true
        #expect(status(open.decide(request("GET", "/metrics", token: nil))) == 200)
        #expect(status(open.decide(request("GET", "/v1/status", token: nil))) == 401)
        let none = ControlAccess(token: nil, hosts: ControlAccess.hosts(listeningOn: "127.0.0.1", extra: []))
        #expect(status(none.decide(request(token: nil))) == 200)
        #expect(status(none.decide(request("POST", "/v1/outputs", token: nil,
                                           ["origin": "http://evil.example", "content-type": "application/json"]))) == 403,
                "without a token the origin check still holds")
        #expect(ControlAccess.same("abc", "abc") && !ControlAccess.same("abc", "abd") && !ControlAccess.same("ab", "abc"))
    }

    /// An HLS player sends no headers of ours and drops the query on relative URIs: the token rides in the path
    /// under /hls/ only; the window route of a WHEP session is JSON like every other body.
    @Test func hlsPlayersCarryTheTokenInThePath() {
        #expect(status(access.decide(request("GET", "/hls/t0ken/master.m3u8", token: nil))) == 200)
        #expect(status(access.decide(request("GET", "/hls/t0ken/320x180/segment00004.ts", token: nil))) == 200)
        #expect(status(access.decide(request("GET", "/hls/t0ke/master.m3u8", token: nil))) == 401)
        #expect(status(access.decide(request("GET", "/hls/master.m3u8", token: nil))) == 401)
        #expect(status(access.decide(request("GET", "/v1/t0ken/status", token: nil))) == 401, "only under /hls/")
        #expect(ControlAccess.hlsToken(in: "/hls//master.m3u8") == nil && ControlAccess.hlsToken(in: "/hls/x/y") == "x")
        #expect(HLSPlaylist.contentType(of: "main/index.m3u8") == "application/vnd.apple.mpegurl"
                && HLSPlaylist.contentType(of: "a/segment00001.ts") == "video/mp2t" && HLSPlaylist.contentType(of: "x.yaml") == nil)
        #expect(status(access.decide(request("POST", "/v1/whep/viewer1/window", ["content-type": "text/plain"]))) == 415)
        #expect(status(access.decide(request("POST", "/v1/whep", ["content-type": "application/sdp"]))) == 200)
    }

    @Test func aBodyThatIsNotDeclaredJSONChangesNothing() {
        // What a page can send without a preflight: text/plain, a form, or nothing.
        for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", nil] {
            var headers: [String: String] = [:]
            if let type { headers["content-type"] = type }
            for (method, path) in [("POST", "/v1/outputs"), ("POST", "/v1/pause"), ("PATCH", "/v1/widgets/memo")] {
                #expect(status(access.decide(request(method, path, headers))) == 415, "\(method) \(path) \(type ?? "none")")
            }
        }
        // WHEP keeps its own type (checked by its route), and requests without a body need none.
        #expect(status(access.decide(request("POST", "/v1/whep", ["content-type": "application/sdp"]))) == 200)
        #expect(status(access.decide(request("DELETE", "/v1/outputs"))) == 200)
    }

    @Test func aPreflightIsAnsweredOnlyForAllowedOrigins() {
        let ok = request("OPTIONS", "/v1/resize", token: nil, ["origin": "https://panel.example"])
        #expect(access.decide(ok) == .preflight)
        #expect(status(access.decide(request("OPTIONS", "/v1/resize", token: nil, ["origin": "http://evil.example"]))) == 403)
    }

    @Test func aWildcardAddressAnswersTheMachinesOwnAddresses() {
        let hosts = ControlAccess.hosts(listeningOn: "0.0.0.0", extra: [])
        #expect(hosts.contains("127.0.0.1") && hosts.contains("localhost"))
        for a in LocalAddresses.ipv4Interfaces() { #expect(hosts.contains(a)) }
        #expect(!hosts.contains("0.0.0.0"))
        #expect(ControlAccess.hosts(listeningOn: "192.0.2.7", extra: []).contains("192.0.2.7"))
    }
}

/// The token file: only its user reads it, `ctl` finds it by port, and a run's end takes only its own away.
@Suite struct ControlTokenTests {
    @Test func aTokenIsStoredForItsUserAloneAndFoundByPort() throws {
        let dir = try TempDir()
        let env = ["XDG_RUNTIME_DIR": dir.path, "HOME": dir.path]
        let token = ControlToken.random()
        #expect(token.count == 48 && token.allSatisfy(\.isHexDigit))
        #expect(ControlToken.random() != token)
        let file = try ControlToken.store(token, port: 8555, environment: env)
        #expect(file == dir.path + "/pipcompose/control-8555.token")
        var st = stat()
        #expect(stat(file, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(stat(dir.path + "/pipcompose", &st) == 0 && st.st_mode & 0o777 == 0o700)
        #expect(ControlToken.load(port: 8555, environment: env) == token)
        #expect(ControlToken.load(port: 8556, environment: env) == nil)
        // A later run on the port replaces it; the earlier run's end leaves the later one's in place.
        let next = ControlToken.random()
        try ControlToken.store(next, port: 8555, environment: env)
        ControlToken.remove(token, port: 8555, environment: env)
        #expect(ControlToken.load(port: 8555, environment: env) == next)
        ControlToken.remove(next, port: 8555, environment: env)
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test func withoutARuntimeFolderItGoesUnderTheCacheClosedToOthers() throws {
        let dir = try TempDir()
        let cache = dir.path + "/.cache"
        try FileManager.default.createDirectory(atPath: cache + "/pipcompose", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        let env = ["HOME": dir.path]
        let file = try ControlToken.store("abc", port: 1234, environment: env)
        #expect(file == cache + "/pipcompose/control-1234.token")
        var st = stat()
        #expect(stat(cache + "/pipcompose", &st) == 0 && st.st_mode & 0o777 == 0o700, "an open folder is closed")
        // A link planted at the file's name is replaced, not followed.
        let victim = try dir.write("victim", "keep")
        unlink(file)
        #expect(symlink(victim, file) == 0)
        try ControlToken.store("def", port: 1234, environment: env)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep")
        #expect(ControlToken.load(port: 1234, environment: env) == "def")
    }
}

/// Where the control API may record: inside the given folders, regular files, never over a file unless asked.
@Suite struct RecordingPlaceTests {
    @Test func theRulesForAPathGivenOverTheAPI() throws {
        let dir = try TempDir(), outside = try TempDir()
        try FileManager.default.createDirectory(atPath: dir.file("sub"), withIntermediateDirectories: true)
        let place = RecordingPlace(folders: [dir.path])
        func refusal(_ path: String, overwrite: Bool = false) -> String {
            do {
                _ = try place.check(path, overwrite: overwrite, claim: false)
                return ""
            } catch { return error.description }
        }
        #expect(try place.check(dir.file("new.mp4"), overwrite: false, claim: false) == dir.file("new.mp4"))
        #expect(try place.check("rel.mkv", overwrite: false, claim: false) == dir.file("rel.mkv"), "inside the first folder")
        #expect(try place.check(dir.file("sub/deep.ts"), overwrite: false, claim: false) == dir.file("sub/deep.ts"))
        #expect(refusal(outside.file("x.mp4")).contains("outside the allowed folders"))
        #expect(refusal(outside.file("x.mp4")).contains("--record-dir"))
        #expect(refusal(dir.file("sub/../x.mp4")).contains("'..'"))
        #expect(refusal("../x.mp4").contains("'..'"))
        #expect(refusal(dir.file("missing/x.mp4")).contains("does not exist"))
        #expect(refusal("/dev/full").contains("outside"))
        let existing = try dir.write("old.mp4", "precious")
        #expect(refusal(existing).contains("\"overwrite\": true"))
        #expect(try place.check(existing, overwrite: true, claim: false) == existing)
        // Links: one that leads out is refused, overwrite or not; one that stays inside is its target.
        #expect(symlink(outside.file("victim.mp4"), dir.file("out.mp4")) == 0)
        #expect(refusal(dir.file("out.mp4"), overwrite: true).contains("leads out"))
        #expect(symlink("/dev/full", dir.file("full.ts")) == 0)
        #expect(refusal(dir.file("full.ts"), overwrite: true).contains("leads out"))
        #expect(symlink(outside.path, dir.file("away")) == 0)
        #expect(refusal(dir.file("away/x.mp4")).contains("outside"), "a linked folder that leads out")
        #expect(symlink(existing, dir.file("in.mp4")) == 0)
        #expect(refusal(dir.file("in.mp4")).contains("exists"))
        #expect(try place.check(dir.file("in.mp4"), overwrite: true, claim: false) == existing)
        #expect(mkfifo(dir.file("fifo.ts"), 0o600) == 0)
        #expect(refusal(dir.file("fifo.ts"), overwrite: true).contains("not a regular file"))
        #expect(refusal(dir.file("sub"), overwrite: true).contains("not a regular file"))
        let devices = RecordingPlace(folders: ["/dev"])
        #expect(throws: RecordingPlace.Refusal.self) { try devices.check("/dev/full", overwrite: true, claim: false) }
    }

    @Test func aNewFileIsClaimedAtOnceAndReleasedIfUnused() throws {
        let dir = try TempDir()
        let place = RecordingPlace(folders: [dir.path])
        let path = try place.check(dir.file("c.mp4"), overwrite: false)
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(throws: RecordingPlace.Refusal.self) { try place.check(dir.file("c.mp4"), overwrite: false) }
        RecordingPlace.release(path)
        #expect(!FileManager.default.fileExists(atPath: path))
        let kept = try dir.write("k.mp4", "data")
        RecordingPlace.release(kept)
        #expect(FileManager.default.fileExists(atPath: kept), "only an empty file is taken away")
    }
}
