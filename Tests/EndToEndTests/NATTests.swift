import Compositor
import Foundation
import Testing
import TestSupport

/// Two homes and the internet between them, in network namespaces of the test's own (torn down after):
///
///     home  10.1.0.2 ── 10.1.0.1 homeRouter 198.51.100.1 ──┐
///                                                          ├─ internet (a bridge; coturn at 198.51.100.254)
///     viewer 10.2.0.2 ── 10.2.0.1 viewerRouter 198.51.100.2 ┘
///
/// Each router masquerades its home behind its public address and drops what comes in unasked, as a home router
/// does; the home router forwards the control port to pipcompose (the page, WHEP). `symmetric` makes both NATs map every flow to a port of its own
/// (nftables `masquerade fully-random`), where STUN's reflexive address is no use and only TURN gets through. No
/// address here exists outside these namespaces; nothing reaches the machine's own network.
final class TwoHomes {
    let tag = String(getpid() % 100000)
    var home: String { "pch\(tag)" }
    var homeRouter: String { "pchr\(tag)" }
    var internet: String { "pcin\(tag)" }
    var viewerRouter: String { "pcvr\(tag)" }
    var viewer: String { "pcv\(tag)" }
    static let homePublic = "198.51.100.1", turnAddress = "198.51.100.254"
    let port: Int

    init(port: Int) throws {
        self.port = port
        let links = [
            (home, "h0", homeRouter, "hr0"), (homeRouter, "hr1", internet, "ih"),
            (viewer, "v0", viewerRouter, "vr0"), (viewerRouter, "vr1", internet, "iv"),
        ]
        var script = ["set -e"]
        for ns in [home, homeRouter, internet, viewerRouter, viewer] {
            script += ["ip netns add \(ns)", "ip -n \(ns) link set lo up"]
        }
        for (a, ia, b, ib) in links {
            script += ["ip link add \(ia)\(tag) netns \(a) type veth peer name \(ib)\(tag) netns \(b)",
                       "ip -n \(a) link set \(ia)\(tag) up", "ip -n \(b) link set \(ib)\(tag) up"]
        }
        script += [
            "ip -n \(internet) link add br0 type bridge", "ip -n \(internet) link set br0 up",
            "ip -n \(internet) link set ih\(tag) master br0", "ip -n \(internet) link set iv\(tag) master br0",
            "ip -n \(internet) addr add \(Self.turnAddress)/24 dev br0",
            // As on the internet, a packet to an address nobody here has is sent and lost. Without a default route
            // coturn's relaying to a viewer's private candidates failed at once (ENETUNREACH), and coturn closed
            // that relay allocation, the one the two homes were using: across symmetric NATs nothing played.
            "ip -n \(internet) route add default dev br0",
            "ip -n \(home) addr add 10.1.0.2/24 dev h0\(tag)", "ip -n \(home) route add default via 10.1.0.1",
            "ip -n \(homeRouter) addr add 10.1.0.1/24 dev hr0\(tag)",
            "ip -n \(homeRouter) addr add \(Self.homePublic)/24 dev hr1\(tag)",
            "ip -n \(viewer) addr add 10.2.0.2/24 dev v0\(tag)", "ip -n \(viewer) route add default via 10.2.0.1",
            "ip -n \(viewerRouter) addr add 10.2.0.1/24 dev vr0\(tag)",
            "ip -n \(viewerRouter) addr add 198.51.100.2/24 dev vr1\(tag)",
            "ip netns exec \(homeRouter) sysctl -qw net.ipv4.ip_forward=1",
            "ip netns exec \(viewerRouter) sysctl -qw net.ipv4.ip_forward=1",
        ]
        let r = try tool(["sh", "-c", script.joined(separator: "\n")])
        guard r.status == 0 else {
            tearDown()
            throw SetupFailure(description: "cannot make the namespaces: \(r.err)")
        }
    }

    struct SetupFailure: Error, CustomStringConvertible { let description: String }

    /// What the routers do: route the homes' own addresses to each other (`none`: a routed network), masquerade the
    /// viewer's home only (`viewerOnly`: pipcompose outside any NAT, its address routed), or both homes behind NATs,
    /// port-preserving (endpoint-independent, as most home routers) or `symmetric`.
    enum NAT { case none, viewerOnly, both(symmetric: Bool) }

    func setNAT(_ nat: NAT) throws {
        var homeRules = "flush ruleset", viewerRules = "flush ruleset"
        // As a home router: what comes in unasked to the router itself is dropped. Without that, a peer's check that
        // arrived before the home's own first packet left a conntrack entry for that pair, and the home's packet was
        // then given another port: every NAT looked symmetric, and STUN never worked.
        func natted(_ interface: String, _ how: String, forward: String = "") -> String {
            """
            flush ruleset
            table ip nat {
              \(forward)
              chain post { type nat hook postrouting priority srcnat; oifname "\(interface)\(tag)" \(how); }
            }
            table ip filter {
              chain input { type filter hook input priority filter; iifname "\(interface)\(tag)" ct state new drop; }
            }
            """
        }
        let forward = "chain pre { type nat hook prerouting priority dstnat; iifname \"hr1\(tag)\" tcp dport \(port) dnat to 10.1.0.2:\(port); }"
        // Routes to the homes' own addresses exist only where nothing hides them.
        var routes: [(String, String, String)] = []
        switch nat {
        case .none:
            routes = [(viewerRouter, "10.1.0.0/24", Self.homePublic), (homeRouter, "10.2.0.0/24", "198.51.100.2"),
                      (internet, "10.1.0.0/24", Self.homePublic), (internet, "10.2.0.0/24", "198.51.100.2")]
        case .viewerOnly:
            routes = [(viewerRouter, "10.1.0.0/24", Self.homePublic), (internet, "10.1.0.0/24", Self.homePublic)]
            viewerRules = natted("vr1", "masquerade")
        case .both(let symmetric):
            let how = symmetric ? "masquerade fully-random" : "masquerade"
            homeRules = natted("hr1", how, forward: forward)
            viewerRules = natted("vr1", how)
        }
        // Only the routes this may have added before (each router's own home is a connected route, kept).
        for (ns, net) in [(viewerRouter, "10.1.0.0/24"), (homeRouter, "10.2.0.0/24"), (internet, "10.1.0.0/24"),
                          (internet, "10.2.0.0/24")] {
            _ = try tool(["ip", "-n", ns, "route", "del", net])
        }
        for (ns, net, via) in routes {
            let r = try tool(["ip", "-n", ns, "route", "add", net, "via", via])
            #expect(r.status == 0, "\(r.err)")
        }
        for (ns, rules) in [(homeRouter, homeRules), (viewerRouter, viewerRules)] {
            let file = NSTemporaryDirectory() + "/nat-\(ns).nft"
            try rules.write(toFile: file, atomically: true, encoding: .utf8)
            defer { unlink(file) }
            let r = try tool(["ip", "netns", "exec", ns, "nft", "-f", file])
            #expect(r.status == 0, "\(r.err)")
        }
    }

    func tearDown() {
        for ns in [home, homeRouter, internet, viewerRouter, viewer] { _ = try? tool(["ip", "netns", "del", ns]) }
    }
}

extension EndToEnd {
    /// A viewer on another network, as the issue has it: pipcompose at home behind one NAT, the viewer at theirs
    /// behind another, the page's port forwarded. Headless Chromium in the viewer's namespace plays the watch link's
    /// page: with endpoint-independent NATs STUN is enough; with both NATs symmetric it is not, and the session says
    /// which candidates it had; through TURN it plays, and coturn relayed the picture.
    @Suite(.serialized) struct NATTests {
        /// pipcompose at home, its page as the viewer reaches it: at `address` (the home router's public one, its
        /// port forwarded, unless the home's own address is routed).
        func run(_ homes: TwoHomes, _ dir: TempDir, ice: [String], address: String = TwoHomes.homePublic) throws
            -> (LiveProcess, String) {
            let p = try LiveProcess("/usr/sbin/ip", ["netns", "exec", homes.home, binary, "run", try timecodeScene(dir),
                                                     "--size", "640x360", "--webrtc", "--control", "0.0.0.0:\(homes.port)",
                                                     "--allow-host", TwoHomes.homePublic, "--webrtc-connect-timeout", "8"] + ice)
            let line = try #require(p.waitForLine(timeout: 30) { $0.hasPrefix("webrtc ") }, "\(p.allOutput)")
            let printed = String(line.split(separator: " ")[1])
            // The page as the viewer reaches it: the home router's public address, its forwarded port.
            return (p, printed.replacingOccurrences(of: "0.0.0.0", with: address))
        }

        func view(_ homes: TwoHomes, _ page: String, timeout: Int = 40) throws -> [String: Any] {
            let r = try LiveProcess("/usr/sbin/ip", ["netns", "exec", homes.viewer, "/usr/bin/python3", fixture("web_viewer.py"),
                                                     page, "--seconds", "2", "--timeout", String(timeout), "--leave", "quit"])
            #expect(r.waitForExit(timeout: TimeInterval(timeout * 4)) == 0, "\(r.allOutput)")
            let last = r.stdout.last { $0.hasPrefix("{") } ?? "{}"
            return (try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]) ?? ["output": r.allOutput]
        }

        func readable(_ seen: [String: Any]) -> Int { (seen["stats"] as? [String: Any])?["readable"] as? Int ?? 0 }

        @Test func aViewerBehindItsNATPlaysAHomeBehindAnotherWithSTUNAndThroughSymmetricNATsWithTURN() throws {
            let dir = try TempDir()
            let homes = try TwoHomes(port: freePort())
            defer { homes.tearDown() }
            // STUN from a coturn on the internet between the homes.
            let turn = try LiveProcess("/usr/sbin/ip", [
                "netns", "exec", homes.internet, "/usr/bin/turnserver", "-n", "--listening-ip=\(TwoHomes.turnAddress)",
                "--listening-port=3478", "--relay-ip=\(TwoHomes.turnAddress)", "--min-port=49152", "--max-port=49300",
                "--use-auth-secret", "--static-auth-secret=s3cret", "--realm=pipcompose.test", "--no-tls", "--no-dtls",
                "--no-cli", "--userdb=\(dir.file("turndb"))", "--pidfile=\(dir.file("turn.pid"))", "--log-file=stdout",
                "--simple-log", "--verbose", // --verbose: what each allocation relayed, as it closes
            ])
            defer { turn.signal(SIGTERM); _ = turn.waitForExit(timeout: 10) }
            #expect(turn.waitForLine(timeout: 20) { $0.contains("Relay ports initialization done") } != nil, "\(turn.allOutput)")
            let stun = ["--ice-server", "stun:\(TwoHomes.turnAddress):3478"]

            // Endpoint-independent NATs: STUN's reflexive addresses meet.
            try homes.setNAT(.both(symmetric: false))
            var (p, page) = try run(homes, dir, ice: stun)
            let viaSTUN = try view(homes, page)
            #expect(viaSTUN["error"] == nil && readable(viaSTUN) > 30, "\(viaSTUN)\n\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")

            // Both symmetric: STUN alone finds no pair; the session says which candidates there were.
            try homes.setNAT(.both(symmetric: true))
            (p, page) = try run(homes, dir, ice: stun)
            let stuck = try view(homes, page, timeout: 15)
            #expect(stuck["error"] != nil, "it played across two symmetric NATs without TURN: \(stuck)")
            #expect(p.waitForLine(timeout: 40) { $0.contains("webrtc: viewer1 left") && $0.contains("srflx") } != nil,
                    "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")

            // Both symmetric, with TURN: it plays, through coturn's relay.
            (p, page) = try run(homes, dir, ice: stun + ["--ice-server", "turn:\(TwoHomes.turnAddress):3478",
                                                         "--turn-secret", "s3cret"])
            let viaTURN = try view(homes, page)
            #expect(viaTURN["error"] == nil && readable(viaTURN) > 30, "\(viaTURN)\n\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")
            // coturn tells, as each allocation closes, what it relayed to and from peers; the picture is what makes
            // one of them large (a second of it is more than 100 kB; STUN checks are a few hundred bytes each).
            let relayed = { (line: String) -> Bool in
                guard line.contains("peer usage") else { return false }
                let fields = line.components(separatedBy: ", ")
                let bytes = fields.compactMap { f -> Int? in
                    guard f.hasPrefix("rb=") || f.hasPrefix("sb=") else { return nil }
                    return Int(f.dropFirst(3).prefix { $0.isNumber })
                }
                return bytes.contains { $0 > 100_000 }
            }
            #expect(turn.waitForLine(timeout: 30, relayed) != nil,
                    "\(turn.stdout.filter { $0.contains("peer usage") })")
        }

        /// The two simpler networks of the issue, with no STUN or TURN at all: a viewer on another routed network
        /// reaches pipcompose's own address, and a viewer behind a NAT reaches a pipcompose outside any: host
        /// candidates (and the viewer's peer-reflexive one) are enough for both.
        @Test func aViewerOnARoutedNetworkAndOneBehindItsNATPlayWithHostCandidates() throws {
            let dir = try TempDir()
            let homes = try TwoHomes(port: freePort())
            defer { homes.tearDown() }
            for nat in [TwoHomes.NAT.none, .viewerOnly] {
                try homes.setNAT(nat)
                let (p, page) = try run(homes, dir, ice: [], address: "10.1.0.2")
                let seen = try view(homes, page)
                #expect(seen["error"] == nil && readable(seen) > 30, "\(nat): \(seen)\n\(p.allOutput)")
                p.signal(SIGINT)
                #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")
            }
        }
    }
}
