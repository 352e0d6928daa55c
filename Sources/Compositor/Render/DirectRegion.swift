import CKernels
import Foundation

/// One strip of a widget's picture, where `TextStrip.draw` would put it (the layout's origin at x, y).
public struct DirectPiece {
    public let strip: TextStrip
    public let x: Double
    public let y: Double

    public init(strip: TextStrip, x: Double, y: Double) {
        self.strip = strip
        self.x = x
        self.y = y
    }
}

/// A region of this frame made only of opaque strips (a scrolling ticker over a plain band), written straight into
/// the frame's I420 planes from the strips' own I420 (see StripPlanes) instead of copied into the canvas and
/// converted: at 720p that copy and conversion were about a third of the frame loop.
///
/// The result is byte for byte what drawing the strips into the canvas and converting gives. The canvas is left
/// stale in the region until `materialize` draws it there, which the renderer does before anything else reads or
/// draws there.
public final class DirectRegion {
    /// The widget (by index in the scene) whose region this is.
    public let widget: Int
    /// The region, whole pixels: x0..<x1, y0..<y1.
    public let region: Rect
    let x0: Int, y0: Int, x1: Int, y1: Int
    let pieces: [DirectPiece]
    /// Where each piece's top-left lands, and its I420.
    private let placed: [(left: Int, top: Int, planes: StripPlanes)]
    /// Columns x0..<x1 cut into spans, each shown by one piece (the last drawn where pieces overlap), left to right.
    private let spans: [(a: Int, b: Int, piece: Int)]

    /// Nil when the region is not whole pixels inside the picture, the pieces do not cover every pixel of it, or a
    /// strip has no I420 form: the widget is then drawn as usual.
    init?(widget: Int, region: Rect, pieces: [DirectPiece], picture: PixelSize) {
        guard region == region.integral, region.width > 0, region.height > 0 else { return nil }
        let x0 = Int(region.minX), y0 = Int(region.minY), x1 = Int(region.maxX), y1 = Int(region.maxY)
        guard x0 >= 0, y0 >= 0, x1 <= picture.width & ~1, y1 <= picture.height & ~1 else { return nil }
        var placed: [(left: Int, top: Int, planes: StripPlanes)] = []
        var spans: [(a: Int, b: Int, piece: Int)] = []
        for (n, p) in pieces.enumerated() {
            let (left, top) = p.strip.placement(x: p.x, y: p.y)
            // Every row of the region from this strip, or nothing.
            guard top <= y0, top + p.strip.height >= y1, let planes = p.strip.planes(verticalPhase: top & 1) else { return nil }
            placed.append((left, top, planes))
            let a = max(x0, left), b = min(x1, left + p.strip.width)
            guard b > a else { continue }
            // Drawn later, this piece replaces what earlier ones showed in a..<b.
            var kept: [(a: Int, b: Int, piece: Int)] = []
            for s in spans {
                if s.a < a { kept.append((s.a, min(s.b, a), s.piece)) }
                if s.b > b { kept.append((max(s.a, b), s.b, s.piece)) }
            }
            spans = kept + [(a, b, n)]
        }
        spans.sort { $0.a < $1.a }
        var covered = x0
        for s in spans {
            guard s.a == covered else { return nil }
            covered = s.b
        }
        guard covered == x1 else { return nil }
        self.widget = widget
        self.region = region
        (self.x0, self.y0, self.x1, self.y1) = (x0, y0, x1, y1)
        self.pieces = pieces
        self.placed = placed
        self.spans = spans
    }

    /// Draws the strips into the canvas: it then holds the region as drawing the widget would have left it.
    func materialize(on canvas: Canvas) {
        canvas.withState {
            canvas.clip(to: region)
            for p in pieces { p.strip.draw(on: canvas, x: p.x, y: p.y, clip: region) }
        }
    }

    /// Writes the region into `planes`: luma of every pixel of x0..<x1, y0..<y1, and the chroma of every 2x2 block
    /// that meets them. A block partly outside (the region's odd edges) takes its other pixels from `bgrx`, the
    /// canvas, which holds the current picture there; a block shown by two pieces takes each pixel from its own.
    /// `scratch` holds two rows of the picture, BGRx and luma (`DirectRegion.scratchBytes`).
    func write(into p: I420Converter.Planes, bgrx: UnsafePointer<UInt8>, stride: Int, scratch: UnsafeMutableRawBufferPointer) {
        for s in spans {
            let q = placed[s.piece]
            let w = q.planes.width
            for y in y0..<y1 {
                (p.y + y * p.yStride + s.a).update(from: q.planes.luma.baseAddress! + (y - q.top) * w + (s.a - q.left),
                                                   count: s.b - s.a)
            }
        }
        // Block columns whose two pixels are not shown by the same piece: at an odd start or end of a span.
        var split: [Int] = []
        if x0 & 1 == 1 { split.append(x0 >> 1) }
        for s in spans where s.b & 1 == 1 { split.append(s.b >> 1) }
        for cy in (y0 >> 1)..<((y1 + 1) >> 1) {
            let u = p.u + cy * p.uStride, v = p.v + cy * p.vStride
            guard 2 * cy >= y0 && 2 * cy + 1 < y1 else {
                edgeRow(cy, u, v, bgrx, stride, scratch)
                continue
            }
            for s in spans {
                let from = (s.a + 1) >> 1, to = s.b >> 1
                guard to > from else { continue }
                let q = placed[s.piece]
                let h = q.left & 1
                let j = (2 * from - q.left + h) >> 1, i = (2 * cy - q.top + q.planes.verticalPhase) >> 1
                let row = i * q.planes.chromaWidth[h] + j
                (u + from).update(from: q.planes.u[h].baseAddress! + row, count: to - from)
                (v + from).update(from: q.planes.v[h].baseAddress! + row, count: to - from)
            }
            for cx in split { mixedBlock(cx, cy, u, v, bgrx, stride) }
        }
    }

    /// Bytes of scratch `write` needs for a picture `width` wide.
    static func scratchBytes(width: Int) -> Int { width * 2 * 4 + width * 2 }

    /// A row of blocks across the region's top or bottom edge (an odd row): one of its two rows is the canvas's, the
    /// other the pieces'. Both are put side by side in `scratch` and converted as any two rows are; the luma goes
    /// to scratch too (the region's luma is written already, the canvas's is not this region's to write).
    private func edgeRow(_ cy: Int, _ u: UnsafeMutablePointer<UInt8>, _ v: UnsafeMutablePointer<UInt8>,
                         _ bgrx: UnsafePointer<UInt8>, _ stride: Int, _ scratch: UnsafeMutableRawBufferPointer) {
        let xa = x0 & ~1, xb = (x1 + 1) & ~1, n = xb - xa
        let rows = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let luma = rows + n * 2 * 4
        for k in 0...1 {
            let y = 2 * cy + k, out = rows + k * n * 4
            let canvasRow = bgrx + y * stride
            guard y >= y0 && y < y1 else {
                out.update(from: canvasRow + xa * 4, count: n * 4)
                continue
            }
            if xa < x0 { out.update(from: canvasRow + xa * 4, count: 4) }
            if xb > x1 { (out + (x1 - xa) * 4).update(from: canvasRow + x1 * 4, count: 4) }
            for s in spans {
                let q = placed[s.piece]
                pieces[s.piece].strip.copyPixels(row: y - q.top, from: s.a - q.left, count: s.b - s.a, into: out + (s.a - xa) * 4)
            }
        }
        ck_bgrx_to_i420(rows, Int32(n * 4), luma, Int32(n), u + (xa >> 1), 0, v + (xa >> 1), 0, 0, 0, Int32(n), 2)
    }

    /// The pixel the frame shows at (x, y): a piece's inside the region, the canvas's outside it.
    @inline(__always)
    private func pixel(_ x: Int, _ y: Int, _ bgrx: UnsafePointer<UInt8>, _ stride: Int) -> UnsafePointer<UInt8> {
        if x >= x0 && x < x1 && y >= y0 && y < y1, let s = spans.first(where: { x < $0.b }) {
            let q = placed[s.piece]
            return pieces[s.piece].strip.pixel(x - q.left, y - q.top)
        }
        return bgrx + y * stride + x * 4
    }

    private func mixedBlock(_ cx: Int, _ cy: Int, _ u: UnsafeMutablePointer<UInt8>, _ v: UnsafeMutablePointer<UInt8>,
                            _ bgrx: UnsafePointer<UInt8>, _ stride: Int) {
        let x = 2 * cx, y = 2 * cy
        ck_bgrx_block_chroma(pixel(x, y, bgrx, stride), pixel(x + 1, y, bgrx, stride), pixel(x, y + 1, bgrx, stride),
                             pixel(x + 1, y + 1, bgrx, stride), u + cx, v + cx)
    }
}
