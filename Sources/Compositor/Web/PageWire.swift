import Foundation

/// What a page's process (`pipcompose web-page`) writes on its standard output for the widget that runs it: a
/// 16-byte head (magic, kind, two numbers, little-endian) and its payload. A frame is `width × height` pixels of
/// premultiplied BGRA, rows `width × 4` bytes apart: what WPE WebKit renders and Cairo's ARGB32 takes as it is. A
/// frame whose every pixel is opaque is sent as `opaqueFrame`. A message is JSON: `{"alive": N, "handed": M, "uri": "…"}` once a second (N: buffers wpesrc has made so far, M: the
/// pictures of WebKit's it took, 0 where they cannot be counted; the address WebKit shows), `{"error": "…"}`.
/// The widget writes commands on the process's standard input, one JSON object a line: `{"size": [W, H]}`,
/// `{"js": "…"}`, `{"location": "…"}`.
enum PageWire {
    static let magic: UInt32 = 0x4657_4350 // "PCWF"

    enum Kind: UInt32 {
        case frame = 1
        case message = 2
        /// A frame with no transparent pixel: the widget copies it instead of blending it.
        case opaqueFrame = 3
    }

    /// The largest page a frame may carry (8K), so a damaged head cannot make the reader allocate without bound.
    static let maxPixels = 7680 * 4320

    static func head(_ kind: Kind, _ a: Int, _ b: Int) -> [UInt8] {
        var out: [UInt8] = []
        for v in [magic, kind.rawValue, UInt32(a), UInt32(b)] { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        return out
    }

    /// Reads a head's fields from 16 bytes; nil when the magic or the kind is wrong.
    static func parse(head bytes: [UInt8]) -> (kind: Kind, a: Int, b: Int)? {
        guard bytes.count == 16 else { return nil }
        func word(_ i: Int) -> UInt32 {
            UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
        }
        guard word(0) == magic, let kind = Kind(rawValue: word(4)) else { return nil }
        return (kind, Int(word(8)), Int(word(12)))
    }
}
