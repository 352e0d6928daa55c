import Compositor
import Foundation
import Testing
import TestSupport

/// A coturn of the test's own on loopback, with `use-auth-secret`: its port and its log.
func startTurn(_ dir: TempDir, secret: String) throws -> (process: LiveProcess, port: Int) {
    let port = freePort(udp: true)
    let relays = freePort(udp: true)
    let t = try LiveProcess("/usr/bin/turnserver", [
        "-n", "--listening-ip=127.0.0.1", "--listening-port=\(port)", "--relay-ip=127.0.0.1",
        "--min-port=\(relays)", "--max-port=\(relays + 40)", "--use-auth-secret", "--static-auth-secret=\(secret)",
        "--realm=pipcompose.test", "--no-tls", "--no-dtls", "--no-cli", "--allow-loopback-peers",
        "--userdb=\(dir.file("turndb"))", "--pidfile=\(dir.file("turn.pid"))", "--log-file=stdout", "--simple-log",
        "--verbose",
    ])
    // Ready once it takes a TCP connection on its port.
    #expect(poll(until: { PortPool.answers(port) }, timeout: 20),
            "coturn did not start: \(t.allOutput)")
    return (t, port)
}

extension EndToEnd {
    /// TURN with Debian's coturn: a browser allowed only TURN's relay (`?relay=1`, what a viewer behind a NAT that
    /// lets nothing else through is left with) plays through coturn with the login the page was given, and does not
    /// with a secret coturn does not share; the session that never connected says which candidates there were.
    @Suite(.serialized) struct TurnTests {
        @Test func aBrowserOnTURNsRelayAlonePlaysWithTheLoginItWasGivenAndNotWithAWrongOne() throws {
            let dir = try TempDir()
            let (turn, port) = try startTurn(dir, secret: "s3cret")
            defer { turn.signal(SIGTERM); _ = turn.waitForExit(timeout: 10) }
            let secretFile = try dir.write("turn-secret", "s3cret\n")
            let (p, _) = try startLive([try timecodeScene(dir), "--webrtc", "--ice-server", "turn:127.0.0.1:\(port)",
                                        "--turn-secret-file", secretFile])
            let page = try #require(pageURL(p), "\(p.allOutput)")
            let c = try #require(controlURL(p))
            let watch = try #require(URLComponents(string: page)?.queryItems?.first { $0.name == "token" }?.value)
            // The page's login: an expiring name for its link, and the name's HMAC under the secret.
            let ice = jsonObject(ask("GET", c + "/v1/ice", token: watch).body)["iceServers"] as? [[String: Any]] ?? []
            let server = try #require(ice.first, "\(ice)")
            #expect(server["urls"] as? [String] == ["turn:127.0.0.1:\(port)"], "\(server)")
            let user = try #require(server["username"] as? String)
            let expiry = try #require(Double(user.split(separator: ":").first ?? ""))
            #expect(user.hasSuffix(":w1") && expiry > Date().timeIntervalSince1970 + 3600, "\(user)")
            #expect(server["credential"] as? String == IceSettings.turnLogin(
                secret: "s3cret", label: "w1", expires: Date(timeIntervalSince1970: expiry)).password)
            let seen = try browserViewer(page + "&relay=1", ["--seconds", "2"])
            #expect(seen["error"] == nil, "\(seen)\n\(p.allOutput)\n\(turn.allOutput.suffix(3000))")
            #expect(((seen["stats"] as? [String: Any])?["readable"] as? Int ?? 0) > 30, "\(seen)")
            // coturn relayed for the page's own login (its link's), and for the viewer's webrtcbin with one of its own.
            for login in [":w1>", ":pipcompose-viewer1>"] {
                #expect(turn.stdout.contains { $0.contains(login) && $0.contains("ALLOCATE processed, success") },
                        "coturn saw no allocation for \(login): \(turn.allOutput.suffix(3000))")
            }
            #expect(turn.stdout.contains { $0.contains(":w1>") && $0.contains("CREATE_PERMISSION processed, success") })
            p.signal(SIGINT)
            #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")

            // The same coturn, a secret it does not share: the browser gets no relay, nothing plays, and the
            // session that never connected says the offer had no candidates.
            let wrong = try dir.write("wrong-secret", "not-the-secret\n")
            let (q, _) = try startLive([try timecodeScene(dir), "--webrtc", "--ice-server", "turn:127.0.0.1:\(port)",
                                        "--turn-secret-file", wrong, "--webrtc-connect-timeout", "5"])
            defer { q.signal(SIGINT); _ = q.waitForExit(timeout: 30) }
            let refused = try browserViewer(try #require(pageURL(q)) + "&relay=1", ["--seconds", "1", "--timeout", "12"])
            #expect(refused["error"] != nil, "it played without a TURN login: \(refused)")
            #expect(q.waitForLine(timeout: 30) { $0.contains("never connected within 5 s") && $0.contains("theirs: none in the offer") }
                    != nil, "\(q.allOutput)")
        }
    }
}
