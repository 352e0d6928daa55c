import Testing
@testable import CompositorCore

/// `--ice-server` as browsers write STUN and TURN URLs, what webrtcbin is given, and the candidates of an SDP.
@Suite struct IceServerTests {
    @Test func urlsAreReadAsBrowsersWriteThem() throws {
        let stun = try IceServer.parse("stun:stun.example.org")
        #expect(stun == IceServer(kind: .stun, host: "stun.example.org", port: 3478, transport: nil))
        #expect(stun.description == "stun:stun.example.org:3478" && stun.gstURI() == "stun://stun.example.org:3478")
        let turn = try IceServer.parse("turn:10.0.0.1:3479?transport=tcp")
        #expect(turn.port == 3479 && turn.transport == "tcp" && turn.isTURN)
        #expect(turn.description == "turn:10.0.0.1:3479?transport=tcp")
        #expect(try IceServer.parse("turns:turn.example.org").port == 5349)
        #expect(try IceServer.parse("turn:[2001:db8::1]:3478").host == "2001:db8::1")
        #expect(try IceServer.parse("TURN:h:1").kind == .turn)
        // A TURN REST login holds ':' in its name and '/', '+', '=' in its password: both escaped for webrtcbin.
        #expect(turn.gstURI(user: "1800000000:w1", password: "a/b+c=")
                == "turn://1800000000%3Aw1:a%2Fb%2Bc%3D@10.0.0.1:3479?transport=tcp")
    }

    @Test func badURLsAreRefusedWithTheRule() {
        for bad in ["", "stun", "http://x", "stun://h:3478", "stun:h:99999", "stun:h:x", "stun:h?transport=udp",
                    "turn:h?transport=sctp", "turns:h?transport=udp", "turn:user:pw@h:3478", "turn:", "stun:a b"] {
            #expect(throws: IceServer.Invalid.self, "\(bad)") { try IceServer.parse(bad) }
        }
        do { _ = try IceServer.parse("turn:u:p@h") } catch { #expect(error.description.contains("--turn-secret")) }
    }

    static let answer = [
        "v=0", "m=video 9 UDP/TLS/RTP/SAVPF 96",
        "a=candidate:1 1 UDP 2015363327 192.168.1.20 50312 typ host",
        "a=candidate:2 1 TCP 1015021823 192.168.1.20 9 typ host tcptype active",
        "a=candidate:3 1 UDP 1679819007 203.0.113.9 50312 typ srflx raddr 192.168.1.20 rport 50312",
        "a=candidate:4 1 UDP 2015363327 fe80::1 50313 typ host",
        "a=end-of-candidates", "",
    ].joined(separator: "\r\n")

    @Test func theCandidatesOfAnSDPAreSummed() {
        #expect(IceCandidates.summary(of: Self.answer) == ["host 192.168.1.20:50312 udp", "host 192.168.1.20:9 tcp",
                                                            "srflx 203.0.113.9:50312 udp", "host fe80::1:50313 udp"])
        #expect(IceCandidates.summary(of: "v=0\r\n").isEmpty)
    }

    @Test func aPublicAddressIsOfferedBesideEachPrivateHostCandidate() {
        let mapped = IceCandidates.addingPublic("198.51.100.7", to: Self.answer)
        let lines = mapped.components(separatedBy: "\r\n").filter { $0.hasPrefix("a=candidate:") }
        #expect(lines == [
            "a=candidate:1 1 UDP 2015363327 192.168.1.20 50312 typ host",
            "a=candidate:19 1 UDP 2015363326 198.51.100.7 50312 typ host",
            "a=candidate:2 1 TCP 1015021823 192.168.1.20 9 typ host tcptype active",
            "a=candidate:29 1 TCP 1015021822 198.51.100.7 9 typ host tcptype active",
            "a=candidate:3 1 UDP 1679819007 203.0.113.9 50312 typ srflx raddr 192.168.1.20 rport 50312",
            "a=candidate:4 1 UDP 2015363327 fe80::1 50313 typ host",
        ], "\(lines)")
        #expect(mapped.hasSuffix("a=end-of-candidates\r\n"))
    }
}
