import Foundation

/// One more picture of the same scene, drawn with the layout its own size gets (`--rendition 416x234@400`):
/// same frame clock, widgets and sound as the main picture, its own renderer and encoder. Its size never
/// follows the main picture's resizes.
public struct Rendition: Sendable, Hashable, CustomStringConvertible {
    public var size: PixelSize
    /// The encoder's bitrate in kbit/s; nil: the default for the size.
    public var bitrateKbps: Int?

    public init(size: PixelSize, bitrateKbps: Int? = nil) {
        self.size = size
        self.bitrateKbps = bitrateKbps
    }

    public var description: String { bitrateKbps.map { "\(size)@\($0)" } ?? "\(size)" }

    /// The largest bitrate a rendition may ask for, in kbit/s (x264's own limit is far above any real stream).
    public static let maximumKbps = 200_000

    /// `WxH` or `WxH@KBPS`.
    public static func parse(_ text: String) throws(OutputSpec.Invalid) -> Rendition {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2 else {
            throw OutputSpec.Invalid(description: "--rendition '\(text)': expected WIDTHxHEIGHT or WIDTHxHEIGHT@KBPS, "
                                     + "e.g. 416x234 or 416x234@400")
        }
        let size: PixelSize
        do { size = try RenderSize.parse(String(parts[0])) } catch {
            throw OutputSpec.Invalid(description: "--rendition '\(text)': \(error)")
        }
        guard parts.count == 2 else { return Rendition(size: size) }
        guard let kbps = Int(parts[1]), kbps > 0, kbps <= maximumKbps else {
            throw OutputSpec.Invalid(description: "--rendition '\(text)': the bitrate after @ is kbit/s, a whole number "
                                     + "from 1 to \(maximumKbps), e.g. \(parts[0])@400; leave it out for the size's default")
        }
        return Rendition(size: size, bitrateKbps: kbps)
    }

    /// The renditions of a run whose main picture is `main`, checked together: none twice, none the main size (that
    /// picture exists already), at most `limit`.
    public static func checked(_ renditions: [Rendition], main: PixelSize, limit: Int = 8) throws(OutputSpec.Invalid) -> [Rendition] {
        guard renditions.count <= limit else {
            throw OutputSpec.Invalid(description: "\(renditions.count) renditions asked for; at most \(limit): each is "
                                     + "drawn and encoded on its own")
        }
        var seen: Set<PixelSize> = []
        for r in renditions {
            if r.size == main {
                throw OutputSpec.Invalid(description: "--rendition \(r): that is the main picture's size already; its "
                                         + "outputs need no @\(r.size)")
            }
            guard seen.insert(r.size).inserted else {
                throw OutputSpec.Invalid(description: "--rendition \(r.size) is given twice; give each size once")
            }
        }
        return renditions
    }

    /// An output named with its rendition, `small.mp4@416x234` or `rtmp://host/live/key@416x234`: the output and
    /// the size. Only a trailing `@WIDTHxHEIGHT` counts (a URL's `user@host` is left alone).
    public static func splitOutput(_ text: String) -> (output: String, rendition: PixelSize?) {
        guard let at = text.lastIndex(of: "@") else { return (text, nil) }
        let tail = text[text.index(after: at)...]
        let sides = tail.split(separator: "x", omittingEmptySubsequences: false)
        guard sides.count == 2, sides.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              let w = Int(sides[0]), let h = Int(sides[1]) else { return (text, nil) }
        return (String(text[..<at]), PixelSize(width: w, height: h))
    }

    /// The rendition an output names, which must be one of `renditions` (nil for the main picture).
    public static func resolve(_ size: PixelSize?, output: String, in renditions: [Rendition],
                               main: PixelSize) throws(OutputSpec.Invalid) -> PixelSize? {
        guard let size else { return nil }
        if size == main && !renditions.contains(where: { $0.size == size }) { return nil }
        guard renditions.contains(where: { $0.size == size }) else {
            let known = renditions.isEmpty ? "none (add --rendition \(size))"
                : renditions.map { "\($0.size)" }.joined(separator: ", ")
            throw OutputSpec.Invalid(description: "'\(output)@\(size)' names no rendition of this run; renditions: \(known)")
        }
        return size
    }
}
