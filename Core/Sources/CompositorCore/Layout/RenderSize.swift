import Foundation

/// Parses and checks a render size given by a user ("1280x720").
///
/// Why a dedicated type: every entry point (CLI, scene file, control API) must refuse the same bad sizes
/// with the same words, before anything starts.
public enum RenderSize {
    /// The largest picture we accept: 8K UHD.
    public static let maximum = PixelSize(width: 7680, height: 4320)
    /// The smallest: below this no widget is readable.
    public static let minimum = PixelSize(width: 16, height: 16)

    public struct Invalid: Error, CustomStringConvertible, Equatable {
        public let text: String
        public let reason: String
        public var description: String { "invalid size '\(text)': \(reason)" }
    }

    /// Parses `WIDTHxHEIGHT`. Sizes must be even in both dimensions because the encoder's 4:2:0 input
    /// halves them for chroma.
    public static func parse(_ text: String) throws(Invalid) -> PixelSize {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2,
              let w = Int(parts[0].trimmingCharacters(in: .whitespaces)),
              let h = Int(parts[1].trimmingCharacters(in: .whitespaces))
        else {
            throw Invalid(text: text, reason: "expected WIDTHxHEIGHT in pixels, e.g. 1280x720")
        }
        return try check(PixelSize(width: w, height: h), text: text)
    }

    /// Checks a size already split into numbers.
    public static func check(_ size: PixelSize, text: String? = nil) throws(Invalid) -> PixelSize {
        let label = text ?? size.description
        let (w, h) = (size.width, size.height)
        if w <= 0 || h <= 0 {
            throw Invalid(text: label, reason: "width and height must be positive")
        }
        if w < minimum.width || h < minimum.height {
            throw Invalid(text: label, reason: "the smallest size is \(minimum)")
        }
        if max(w, h) > maximum.width || min(w, h) > maximum.height {
            throw Invalid(text: label, reason: "the largest size is \(maximum) (or \(maximum.height)x\(maximum.width) in portrait)")
        }
        if w % 2 != 0 || h % 2 != 0 {
            let suggestion = PixelSize(width: w + w % 2, height: h + h % 2)
            throw Invalid(text: label, reason: "width and height must be even for 4:2:0 video; use \(suggestion)")
        }
        return size
    }
}
