import Foundation
import Testing
import TestSupport
@testable import Compositor

/// A fixed instant: 2026-03-04 05:06:07 UTC.
let fixedWall = Date(timeIntervalSince1970: 1_772_600_767)

func time(_ media: Double, wall: Date = fixedWall, frame: Int64 = 0) -> FrameTime {
    FrameTime(frame: frame, media: media, wall: wall)
}

/// Draws one widget alone on a black picture.
func drawAlone(_ widget: any Widget, size: PixelSize, box: Rect, at t: FrameTime,
               engine: TextEngine = TextEngine()) throws -> ImageSurface {
    let surface = try ImageSurface(width: size.width, height: size.height)
    let canvas = Canvas(surface: surface)
    canvas.paint(size.rect, .black)
    widget.layout(box: box, frame: size, engine: engine)
    widget.draw(on: canvas, at: t)
    surface.flush()
    return surface
}

/// Bytes of a rectangle of a surface, row by row.
func pixels(_ s: ImageSurface, _ r: Rect) -> [UInt8] {
    let x0 = Int(r.x), y0 = Int(r.y), w = Int(r.width), h = Int(r.height)
    return s.withBytes { buf in
        var out: [UInt8] = []
        out.reserveCapacity(w * h * 4)
        for y in y0..<(y0 + h) {
            let start = y * s.stride + x0 * 4
            out.append(contentsOf: buf[start..<(start + w * 4)])
        }
        return out
    }
}

/// How many pixels in `r` are not black.
func litPixels(_ s: ImageSurface, _ r: Rect) -> Int {
    let p = pixels(s, r)
    var n = 0
    for i in stride(from: 0, to: p.count, by: 4) where p[i] > 16 || p[i + 1] > 16 || p[i + 2] > 16 { n += 1 }
    return n
}

/// Where two surfaces differ: the count of differing pixels and their bounding box (nil when identical).
/// Tests compare with this, never with `==` on pixel arrays, so a failure prints a line, not megabytes.
func difference(_ a: ImageSurface, _ b: ImageSurface, in r: Rect) -> (count: Int, bounds: Rect?) {
    let pa = pixels(a, r), pb = pixels(b, r)
    let w = Int(r.width)
    var n = 0
    var x0 = Int.max, y0 = Int.max, x1 = -1, y1 = -1
    for i in stride(from: 0, to: min(pa.count, pb.count), by: 4)
    where pa[i] != pb[i] || pa[i + 1] != pb[i + 1] || pa[i + 2] != pb[i + 2] {
        n += 1
        let x = (i / 4) % w, y = (i / 4) / w
        x0 = min(x0, x); y0 = min(y0, y); x1 = max(x1, x); y1 = max(y1, y)
    }
    guard n > 0 else { return (0, nil) }
    return (n, Rect(x: r.x + Double(x0), y: r.y + Double(y0), width: Double(x1 - x0 + 1), height: Double(y1 - y0 + 1)))
}
