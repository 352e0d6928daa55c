import Foundation

/// Where a video layer's pictures come from (`source:` of a `video` widget), checked when the scene is read.
public enum VideoSource: Sendable, Equatable, CustomStringConvertible {
    /// A generated pattern (`test:` or `test:NAME`, NAME one of videotestsrc's patterns), live.
    case test(pattern: String)
    /// Anything GStreamer opens by URI: `file://`, `rtsp://`, `rtsps://`, `srt://`, `http(s)://`, `v4l2://`.
    case uri(String)

    public static let schemes = ["file", "rtsp", "rtsps", "rtspt", "srt", "http", "https", "v4l2", "udp", "rtmp"]
    public static let patterns = ["smpte", "snow", "black", "white", "red", "green", "blue", "checkers-1",
                                  "checkers-2", "checkers-4", "checkers-8", "circular", "blink", "smpte75",
                                  "zone-plate", "gamut", "chroma-zone-plate", "solid-color", "ball", "smpte100",
                                  "bar", "pinwheel", "spokes", "gradient", "colors"]

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
    }

    public var description: String {
        switch self {
        case .test(let p): "test:\(p)"
        case .uri(let u): u
        }
    }

    /// A live source has no end to loop to: when it stops, it is retried.
    public var isFile: Bool {
        if case .uri(let u) = self { return u.hasPrefix("file://") }
        return false
    }

    /// `test[:PATTERN]`, a URI of a known scheme, or a path (made absolute against `directory`) that must exist.
    public static func parse(_ text: String, directory: String = ".") throws(Invalid) -> VideoSource {
        let t = text.trimmingCharacters(in: .whitespaces)
        guard !t.isEmpty else { throw Invalid(description: "a video source must not be empty") }
        if t == "test" || t.hasPrefix("test:") {
            let p = t == "test" ? "smpte" : String(t.dropFirst(5))
            guard patterns.contains(p) else {
                throw Invalid(description: "unknown test pattern '\(p)'; expected one of \(patterns.joined(separator: ", "))")
            }
            return .test(pattern: p)
        }
        if let r = t.range(of: "://") {
            let scheme = t[..<r.lowerBound].lowercased()
            guard schemes.contains(scheme) else {
                throw Invalid(description: "unknown scheme '\(scheme)://' in '\(t)'; expected \(schemes.map { $0 + "://" }.joined(separator: ", ")), test:PATTERN or a file path")
            }
            if scheme == "file" {
                guard let path = URL(string: t)?.path, FileManager.default.fileExists(atPath: path) else {
                    throw Invalid(description: "no such file '\(t)'")
                }
            }
            return .uri(t)
        }
        let path = t.hasPrefix("/") ? t : (directory as NSString).appendingPathComponent((t as NSString).expandingTildeInPath)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw Invalid(description: "no such file '\(path)'; a video source is a file, a URI (\(schemes.prefix(5).map { $0 + "://" }.joined(separator: ", ")), …) or test:PATTERN")
        }
        return .uri(URL(fileURLWithPath: path).absoluteString)
    }
}
