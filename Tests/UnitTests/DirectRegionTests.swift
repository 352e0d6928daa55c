import Foundation
import Testing
@testable import Compositor

/// DirectRegion writes opaque strips straight into I420. Whatever the edges, the phases and the overlaps, the planes
/// must be what drawing the strips into the canvas and converting the picture gives, byte for byte.
@Suite struct DirectRegionTests {
    /// A picture's I420 planes in plain arrays.
    final class Frame {
        let w: Int, h: Int
        var y: [UInt8], u: [UInt8], v: [UInt8]
        init(_ w: Int, _ h: Int) {
            self.w = w
            self.h = h
            y = [UInt8](repeating: 0, count: w * h)
            u = [UInt8](repeating: 0, count: w * h / 4)
            v = [UInt8](repeating: 0, count: w * h / 4)
        }
        func withPlanes(_ body: (I420Converter.Planes) -> Void) {
            y.withUnsafeMutableBufferPointer { py in
                u.withUnsafeMutableBufferPointer { pu in
                    v.withUnsafeMutableBufferPointer { pv in
                        body(.init(y: py.baseAddress!, yStride: w, u: pu.baseAddress!, uStride: w / 2, v: pv.baseAddress!, vStride: w / 2))
                    }
                }
            }
        }
        func convert(_ s: ImageSurface) {
            s.flush()
            withPlanes { p in
                s.withBytes { b in
                    I420Converter.convert(bgrx: b.baseAddress!.assumingMemoryBound(to: UInt8.self), stride: s.stride, into: p,
                                          rect: (0, 0, w, h))
                }
            }
        }
    }

    /// Text whose ink reaches every row of the region (full blocks), blended over rows of changing colour, placed so
    /// that: the region's four edges are odd; two copies of one strip overlap on an odd column; a second strip (other
    /// text, other height) starts the next span on an even column with the other vertical phase; and the first copy
    /// starts left of the region.
    @Test(arguments: [0.0, 1.0, 2.0, 3.0])
    func stripsGiveTheBytesOfDrawingAndConverting(shift: Double) throws {
        let w = 320, h = 120
        let engine = TextEngine()
        func strip(_ text: String, _ size: Double, _ tint: Int) throws -> TextStrip {
            let layout = TextLayout(engine: engine, text: text, font: FontStyle(), pixelSize: size)
            return try TextStrip(layout: layout, color: Color(red: 1, green: 0.9, blue: 0.2, alpha: 1)).opaque { row in
                Color(red: Double((row * 7 + tint) % 200) / 255, green: 0.2, blue: Double((row * 3) % 255) / 255, alpha: 1)
            }
        }
        let a = try strip("█▀▄█ Ağ漢 █▄", 44, 0), b = try strip("▄█ب🎬█", 38, 90)
        let region = Rect(x: 21, y: 43, width: 261, height: 26)
        let x2 = 21 + Double(a.width) - 14 + shift, x3 = x2 + Double(a.width) - 3
        let pieces = [DirectPiece(strip: a, x: 3 + shift, y: 29 - Double(a.origin.y) - 0),
                      DirectPiece(strip: a, x: x2, y: 29 - Double(a.origin.y)),
                      DirectPiece(strip: b, x: x3, y: 30 - Double(b.origin.y))]
        let d = try #require(DirectRegion(widget: 0, region: region, pieces: pieces, picture: PixelSize(width: w, height: h)))
        // The canvas around: a pattern that differs in every pixel, so a block taking a wrong neighbour shows.
        let canvasSurface = try ImageSurface(width: w, height: h)
        canvasSurface.withMutableBytes(dirty: (0, 0, w, h)) { bytes in
            for y in 0..<h { for x in 0..<w {
                let i = y * canvasSurface.stride + x * 4
                bytes[i] = UInt8((x * 5 + y) % 256); bytes[i + 1] = UInt8((x + y * 9) % 256); bytes[i + 2] = UInt8((x * y) % 256)
            } }
        }
        let canvas = Canvas(surface: canvasSurface)
        // Written straight: the planes of the canvas as it is, then the region.
        let direct = Frame(w, h)
        direct.convert(canvasSurface)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: DirectRegion.scratchBytes(width: w), alignment: 32)
        defer { scratch.deallocate() }
        canvasSurface.withBytes { b in
            direct.withPlanes { p in d.write(into: p, bgrx: b.baseAddress!.assumingMemoryBound(to: UInt8.self), stride: canvasSurface.stride, scratch: scratch) }
        }
        // Drawn, then converted.
        d.materialize(on: canvas)
        let drawn = Frame(w, h)
        drawn.convert(canvasSurface)
        #expect(direct.y == drawn.y, "luma differs in \(zip(direct.y, drawn.y).filter { $0 != $1 }.count) pixels")
        #expect(direct.u == drawn.u && direct.v == drawn.v,
                "chroma differs in \(zip(direct.u + direct.v, drawn.u + drawn.v).filter { $0 != $1 }.count) blocks")
        // The strips put ink (yellow: luma above 190, the rows under it stay below 70) in the region's first and last
        // rows, else its edges were not tested.
        let first = (21..<282).map { drawn.y[43 * w + $0] }, last = (21..<282).map { drawn.y[68 * w + $0] }
        #expect(first.contains { $0 > 190 } && last.contains { $0 > 190 })
    }

    /// Pieces that leave a column of the region uncovered, or miss a row of it: drawn as usual instead.
    @Test func piecesThatDoNotCoverTheRegionAreRefused() throws {
        let layout = TextLayout(engine: TextEngine(), text: "gap", font: FontStyle(), pixelSize: 30)
        let s = try TextStrip(layout: layout, color: .white).opaque { _ in .black }
        let picture = PixelSize(width: 320, height: 120)
        let top = 10 - Double(s.origin.y)
        let fits = Rect(x: 10, y: 10, width: Double(s.width) - 2, height: Double(s.height) - 2)
        #expect(DirectRegion(widget: 0, region: fits, pieces: [DirectPiece(strip: s, x: 10 - Double(s.origin.x), y: top)], picture: picture) != nil)
        let wider = Rect(x: 10, y: 10, width: Double(s.width) + 1, height: Double(s.height) - 2)
        #expect(DirectRegion(widget: 0, region: wider, pieces: [DirectPiece(strip: s, x: 10 - Double(s.origin.x), y: top)], picture: picture) == nil)
        let taller = Rect(x: 10, y: 9, width: Double(s.width) - 2, height: Double(s.height))
        #expect(DirectRegion(widget: 0, region: taller, pieces: [DirectPiece(strip: s, x: 10 - Double(s.origin.x), y: top)], picture: picture) == nil)
        let transparent = try TextStrip(layout: layout, color: .white)
        #expect(DirectRegion(widget: 0, region: fits, pieces: [DirectPiece(strip: transparent, x: 10 - Double(s.origin.x), y: top)], picture: picture) == nil)
    }
}
