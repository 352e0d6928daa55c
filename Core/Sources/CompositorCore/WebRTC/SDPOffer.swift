import Foundation

/// What a WHEP client's SDP offer asks for, read before anything is built: the first video section's codecs and
/// direction. Malformed offers, offers without video and offers with no codec pipcompose can send are refused with
/// what was wrong and what it can send.
public struct SDPOffer: Sendable, Equatable {
    public struct Codec: Sendable, Equatable {
        public var payloadType: Int
        public var name: String
        public var clockRate: Int
        public var parameters: [String: String]
    }

    public struct Refused: Error, CustomStringConvertible {
        public let description: String
    }

    /// The first video section's codecs, in the offer's order of preference.
    public var videoCodecs: [Codec]
    /// `recvonly`, `sendrecv`, `sendonly` or `inactive`.
    public var videoDirection: String
    /// Kinds of the other media sections (audio, application), answered as rejected.
    public var otherMedia: [String]
    /// The first audio section's Opus entry when that section asks to receive: where the sound goes.
    public var opus: Codec?

    /// What pipcompose sends: H.264 in packetization mode 1 from one encoder shared by every viewer, else VP8.
    public static let canSend = "H.264 with packetization-mode=1 (constrained baseline; a Baseline, Main or High decoder plays it), or VP8"

    /// The video codec a viewer gets: H.264 when its offer has it (the live encoder's own stream), else VP8 (the
    /// stream decoded and encoded again while such viewers watch).
    public enum Choice: Sendable, Equatable {
        case h264(Codec)
        case vp8(Codec)

        public var payloadType: Int {
            switch self {
            case .h264(let c), .vp8(let c): c.payloadType
            }
        }
    }

    /// H.264 if the offer has it, else VP8, else a refusal naming what the offer has and what can be sent.
    public func choice() throws(Refused) -> Choice {
        do { return .h264(try h264()) } catch {
            if !["recvonly", "sendrecv"].contains(videoDirection) { throw error }
            if let vp8 = videoCodecs.first(where: { $0.name == "VP8" && $0.clockRate == 90000 }) { return .vp8(vp8) }
            throw error
        }
    }

    public static func parse(_ text: String) throws(Refused) -> SDPOffer {
        let lines = text.split(whereSeparator: \.isNewline).map(String.init)
        guard lines.first == "v=0", lines.contains(where: { $0.hasPrefix("m=") }) else {
            throw Refused(description: "the body is not an SDP offer (expected 'v=0' on its first line and an 'm=' line); send the RTCPeerConnection's localDescription.sdp as application/sdp")
        }
        var sections: [[String]] = []
        for line in lines {
            if line.hasPrefix("m=") { sections.append([line]) } else if !sections.isEmpty { sections[sections.count - 1].append(line) }
        }
        var other: [String] = []
        var video: (codecs: [Codec], direction: String)?
        var audio: (codecs: [Codec], direction: String)?
        for section in sections {
            let kind = String(section[0].dropFirst(2).prefix { $0 != " " })
            guard (kind == "video" && video == nil) || (kind == "audio" && audio == nil) else {
                other.append(kind)
                continue
            }
            let fields = section[0].split(separator: " ")
            let order = fields.dropFirst(3).compactMap { Int($0) }
            var codecs: [Int: Codec] = [:]
            var direction = "sendrecv"
            for line in section.dropFirst() {
                if let v = attribute(line, "rtpmap"), let (pt, rest) = split(v) {
                    let parts = rest.split(separator: "/")
                    codecs[pt] = Codec(payloadType: pt, name: parts.first.map(String.init)?.uppercased() ?? "",
                                       clockRate: parts.count > 1 ? Int(parts[1]) ?? 0 : 0, parameters: codecs[pt]?.parameters ?? [:])
                } else if let v = attribute(line, "fmtp"), let (pt, rest) = split(v) {
                    var p: [String: String] = [:]
                    for pair in rest.split(separator: ";") {
                        let kv = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                        if kv.count == 2 { p[kv[0].lowercased()] = kv[1] }
                    }
                    if codecs[pt] != nil { codecs[pt]!.parameters = p } else {
                        codecs[pt] = Codec(payloadType: pt, name: "", clockRate: 0, parameters: p)
                    }
                } else if ["a=recvonly", "a=sendrecv", "a=sendonly", "a=inactive"].contains(line) {
                    direction = String(line.dropFirst(2))
                }
            }
            let listed = (order.compactMap { codecs[$0] }.filter { !$0.name.isEmpty }, direction)
            if kind == "video" { video = listed } else { audio = listed }
        }
        guard let video else {
            throw Refused(description: "the offer has no video section; add a video transceiver (addTransceiver('video', {direction: 'recvonly'}))")
        }
        let opus = audio.flatMap { a in
            ["recvonly", "sendrecv"].contains(a.direction) ? a.codecs.first { $0.name == "OPUS" && $0.clockRate == 48000 } : nil
        }
        return SDPOffer(videoCodecs: video.codecs, videoDirection: video.direction, otherMedia: other, opus: opus)
    }

    /// The H.264 payload type to answer with, or a refusal naming what the offer has and what can be sent. A
    /// constrained-baseline entry is preferred, then Baseline, Main and High (each decodes constrained baseline).
    public func h264() throws(Refused) -> Codec {
        guard videoDirection == "recvonly" || videoDirection == "sendrecv" else {
            throw Refused(description: "the offer's video is '\(videoDirection)'; a viewer receives: use recvonly")
        }
        let usable = videoCodecs.filter { $0.name == "H264" && $0.clockRate == 90000 && $0.parameters["packetization-mode"] == "1" }
        func rank(_ c: Codec) -> Int {
            let profile = (c.parameters["profile-level-id"] ?? "42e01f").lowercased()
            if profile.hasPrefix("42e0") || profile.hasPrefix("42c0") { return 0 }
            if profile.hasPrefix("4200") { return 1 }
            if profile.hasPrefix("4d") { return 2 }
            if profile.hasPrefix("64") { return 3 }
            return 9
        }
        guard let best = usable.filter({ rank($0) < 9 }).min(by: { rank($0) < rank($1) }) else {
            let helpers: Set<String> = ["RTX", "RED", "ULPFEC", "FLEXFEC-03"]
            let names: [String] = videoCodecs.map(\.name).filter { !helpers.contains($0) }
            let offered: [String] = Array(Set(names)).sorted()
            throw Refused(description: "no video codec pipcompose can send: the offer has \(offered.isEmpty ? "none" : offered.joined(separator: ", ")); pipcompose sends \(Self.canSend)")
        }
        return best
    }

    private static func attribute(_ line: String, _ name: String) -> String? {
        let prefix = "a=\(name):"
        return line.hasPrefix(prefix) ? String(line.dropFirst(prefix.count)) : nil
    }

    private static func split(_ value: String) -> (Int, String)? {
        guard let space = value.firstIndex(of: " "), let pt = Int(value[..<space]) else { return nil }
        return (pt, String(value[value.index(after: space)...]))
    }
}
