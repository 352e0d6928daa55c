import Foundation

/// The two kinds of HLS playlist a ladder has (RFC 8216): a rung's media playlist, as hlssink2 writes it and the
/// master reads it back, and the multivariant (master) playlist pipcompose writes.
public enum HLSPlaylist {
    public struct Segment: Sendable, Equatable {
        public var uri: String
        public var duration: Double
        public init(uri: String, duration: Double) {
            self.uri = uri
            self.duration = duration
        }
    }

    /// The target duration and the segments of a media playlist (each `#EXTINF:D,` and the URI line after it).
    public static func media(_ text: String) -> (targetDuration: Int?, segments: [Segment]) {
        var target: Int?
        var segments: [Segment] = []
        var pending: Double?
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#EXT-X-TARGETDURATION:") {
                target = Int(line.dropFirst("#EXT-X-TARGETDURATION:".count))
            } else if line.hasPrefix("#EXTINF:") {
                pending = Double(line.dropFirst("#EXTINF:".count).split(separator: ",", maxSplits: 1).first ?? "")
            } else if !line.isEmpty && !line.hasPrefix("#"), let d = pending {
                segments.append(Segment(uri: line, duration: d))
                pending = nil
            }
        }
        return (target, segments)
    }

    /// One rung as the master names it.
    public struct Variant: Sendable, Equatable {
        public var uri: String
        /// Peak segment bit rate (bit/s), as RFC 8216 4.3.4.2 defines BANDWIDTH; and the average.
        public var bandwidth: Int
        public var averageBandwidth: Int?
        public var size: PixelSize
        public var codecs: String
        public var frameRate: Double

        public init(uri: String, bandwidth: Int, averageBandwidth: Int?, size: PixelSize, codecs: String, frameRate: Double) {
            self.uri = uri
            self.bandwidth = bandwidth
            self.averageBandwidth = averageBandwidth
            self.size = size
            self.codecs = codecs
            self.frameRate = frameRate
        }
    }

    /// The multivariant playlist naming `variants`, in their order (a player starts with the first). Every segment
    /// starts with a key frame, so they are independent.
    public static func master(_ variants: [Variant]) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-INDEPENDENT-SEGMENTS"]
        for v in variants {
            var attributes = ["BANDWIDTH=\(v.bandwidth)"]
            if let a = v.averageBandwidth { attributes.append("AVERAGE-BANDWIDTH=\(a)") }
            attributes.append("RESOLUTION=\(v.size.width)x\(v.size.height)")
            attributes.append("CODECS=\"\(v.codecs)\"")
            attributes.append(String(format: "FRAME-RATE=%.3f", v.frameRate))
            lines.append("#EXT-X-STREAM-INF:" + attributes.joined(separator: ","))
            lines.append(v.uri)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The RFC 6381 name of an H.264 stream from the profile and level GStreamer's h264parse puts in its caps
    /// (`constrained-baseline`, `3.1` → `avc1.42C01F`); nil for what it does not know.
    public static func avc1(profile: String, level: String) -> String? {
        let prefix: String
        switch profile {
        case "constrained-baseline": prefix = "42C0"
        case "baseline": prefix = "4200"
        case "main": prefix = "4D40"
        case "high": prefix = "6400"
        default: return nil
        }
        let idc: Int
        if level == "1b" { idc = 9 } else {
            let parts = level.split(separator: ".")
            guard let major = parts.first.flatMap({ Int($0) }) else { return nil }
            idc = major * 10 + (parts.count > 1 ? Int(parts[1]) ?? 0 : 0)
        }
        return "avc1." + prefix + String(format: "%02X", idc)
    }

    /// The media type of a file of the ladder's folder as a web server should send it; nil for anything else.
    public static func contentType(of path: String) -> String? {
        switch (path as NSString).pathExtension.lowercased() {
        case "m3u8": "application/vnd.apple.mpegurl"
        case "ts": "video/mp2t"
        case "m4s": "video/iso.segment"
        case "mp4": "video/mp4"
        default: nil
        }
    }
}
