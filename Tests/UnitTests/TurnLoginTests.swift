import Foundation
import Testing
@testable import Compositor

/// TURN logins the coturn way (use-auth-secret): the name says until when, the password is the name's HMAC-SHA1 under
/// the secret; each page and viewer gets its own.
@Suite struct TurnLoginTests {
    @Test func aLoginIsTheNamesHMACUnderTheSecret() {
        // Python: base64(hmac.new(b"s3cret", b"1800000000:test", hashlib.sha1).digest())
        let login = IceSettings.turnLogin(secret: "s3cret", label: "test", expires: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(login.user == "1800000000:test" && login.password == "lJDTgQ37INjJgfcoJXJCO+f2MOQ=")
    }

    @Test func aPageGetsAServerListWithItsOwnLogin() throws {
        var ice = IceSettings(servers: [try IceServer.parse("stun:127.0.0.1:3478"), try IceServer.parse("turn:127.0.0.1:3478")],
                              turnSecret: "s3cret")
        ice.loginLifetime = 3600
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let servers = ice.browserServers(label: "w1", now: now)
        #expect(servers.count == 2 && servers[0].urls == ["stun:127.0.0.1:3478"] && servers[0].username == nil)
        #expect(servers[1].urls == ["turn:127.0.0.1:3478"] && servers[1].username == "1800003600:w1")
        #expect(servers[1].credential == IceSettings.turnLogin(secret: "s3cret", label: "w1",
                                                                expires: now.addingTimeInterval(3600)).password)
        #expect(IceSettings(servers: ice.servers).turnLogin(label: "w1") == nil, "no secret, no login")
    }
}
