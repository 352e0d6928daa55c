import Foundation

/// Where `--push rtp://HOST:VIDEO_PORT[?audio=PORT][&pt=96][&audio_pt=111]` sends: H.264 RTP to one UDP port and,
/// when asked, Opus RTP to another, the way a Janus streaming mountpoint (or any RTP receiver told the payload
/// types) takes them, each with its RTCP on the next port up (RFC 3550's convention, what an SDP's receiver
/// expects). A multicast HOST reaches every receiver that joined the group.
public struct RTPTarget: Sendable, Equatable {
    public var host: String
    public var videoPort: Int
    public var audioPort: Int?
    public var videoPayloadType = 96
    public var audioPayloadType = 111

    public static let example = "rtp://127.0.0.1:5004?audio=5006"

    /// Parses and checks an `rtp://` URL; every refusal says what to write instead.
    public static func parse(_ url: String) throws(OutputSpec.Invalid) -> RTPTarget {
        func refuse(_ why: String) -> OutputSpec.Invalid {
            OutputSpec.Invalid(description: "cannot push to '\(url)': \(why); e.g. \(example)")
        }
        guard let c = URLComponents(string: url), c.scheme?.lowercased() == "rtp",
              let host = c.host, !host.isEmpty else { throw refuse("expected rtp://HOST:VIDEO_PORT") }
        guard c.user == nil, c.password == nil else { throw refuse("RTP has no user or password") }
        guard c.path.isEmpty || c.path == "/" else { throw refuse("RTP has no path ('\(c.path)')") }
        guard let port = c.port else { throw refuse("rtp:// needs the video port") }
        guard (1...65534).contains(port) else { throw refuse("the video port must be 1...65534 (its RTCP goes to the next)") }
        var target = RTPTarget(host: host, videoPort: port)
        for item in c.queryItems ?? [] {
            guard let text = item.value, let n = Int(text) else {
                throw refuse("'\(item.name)' needs a number")
            }
            switch item.name {
            case "audio":
                guard (1...65534).contains(n) else { throw refuse("the audio port must be 1...65534 (its RTCP goes to the next)") }
                guard n != port else { throw refuse("the audio port must differ from the video port") }
                guard abs(n - port) != 1 else {
                    throw refuse("the audio port must not be next to the video port: each stream's RTCP takes the port after it")
                }
                target.audioPort = n
            case "pt", "audio_pt":
                // Dynamic payload types; 72–76 would read as RTCP packet types to receivers that mux them.
                guard (96...127).contains(n) else { throw refuse("'\(item.name)' must be a dynamic payload type, 96...127") }
                if item.name == "pt" { target.videoPayloadType = n } else { target.audioPayloadType = n }
            default:
                throw refuse("unknown option '\(item.name)' (known: audio, pt, audio_pt)")
            }
        }
        if target.audioPort != nil, target.videoPayloadType == target.audioPayloadType {
            throw refuse("the video and audio payload types must differ")
        }
        return target
    }

    /// The UDP ports it sends to (RTP and RTCP), for telling two pushes apart.
    public var ports: [Int] { [videoPort, videoPort + 1] + (audioPort.map { [$0, $0 + 1] } ?? []) }

    /// Whether two targets would send to the same port of the same host (their receivers would mix two streams).
    public func overlaps(_ other: RTPTarget) -> Bool {
        host.lowercased() == other.host.lowercased() && !Set(ports).isDisjoint(with: other.ports)
    }
}

extension OutputSpec {
    /// Two `rtp://` pushes that would send to one port of one host.
    public func sharesRTPPort(with other: OutputSpec) -> Bool {
        guard case .push(let a, "rtp") = self, case .push(let b, "rtp") = other,
              let ta = try? RTPTarget.parse(a), let tb = try? RTPTarget.parse(b) else { return false }
        return ta.overlaps(tb)
    }
}
