import ArgumentParser
import Compositor
import Foundation

/// NAT traversal for `run --webrtc`: STUN/TURN servers, the TURN secret, a 1:1 NAT's public address.
struct IceOptions: ParsableArguments {
    @Option(help: "A STUN or TURN server for WebRTC viewers across NATs: stun:HOST[:PORT], turn:HOST[:PORT][?transport=udp|tcp], turns:HOST[:PORT]. Repeatable.")
    var iceServer: [String] = []

    @Option(help: "The TURN server's shared secret (coturn's static-auth-secret): each viewer gets a login of its own, made from it, that expires (prefer --turn-secret-file or PIPCOMPOSE_TURN_SECRET: options show in ps).")
    var turnSecret: String?

    @Option(help: "A file holding the TURN secret (its first line).")
    var turnSecretFile: String?

    @Option(help: "This machine's public IPv4 address behind a 1:1 NAT (its ports forwarded): offered to viewers beside the private ones.")
    var icePublicIp: String?

    func settings() throws -> IceSettings {
        var s = IceSettings()
        do { s.servers = try iceServer.map { text throws(IceServer.Invalid) in try IceServer.parse(text) } } catch {
            throw ValidationError(error.description)
        }
        if turnSecret != nil && turnSecretFile != nil {
            throw ValidationError("--turn-secret and --turn-secret-file: give one")
        }
        if let file = turnSecretFile {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8),
                  let line = text.split(whereSeparator: \.isNewline).first.map(String.init), !line.isEmpty else {
                throw ValidationError("--turn-secret-file '\(file)' cannot be read or is empty: it holds the secret on its first line")
            }
            s.turnSecret = line
        } else {
            s.turnSecret = turnSecret ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_TURN_SECRET"]
        }
        let turns = s.servers.contains(where: \.isTURN)
        if turns && s.turnSecret == nil {
            throw ValidationError("a TURN server needs its shared secret: --turn-secret-file FILE (coturn's "
                                  + "static-auth-secret, with use-auth-secret), --turn-secret or PIPCOMPOSE_TURN_SECRET")
        }
        if !turns && s.turnSecret != nil {
            throw ValidationError("--turn-secret is for a TURN server: add --ice-server turn:HOST[:PORT]")
        }
        if let ip = icePublicIp {
            guard IceCandidates.isIPv4(ip) else {
                throw ValidationError("--ice-public-ip takes an IPv4 address, e.g. 203.0.113.7, got '\(ip)'")
            }
            s.publicIP = ip
        }
        return s
    }
}
