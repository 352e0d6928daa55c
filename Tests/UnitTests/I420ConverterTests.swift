import CKernels
import Foundation
import Testing
@testable import Compositor

@Suite struct I420ConverterTests {
    /// Planes with a stride wider than the picture, filled with a marker, so a write outside the rectangle shows.
    struct Planes {
        var y, u, v: [UInt8]
        let width, height: Int
        var yStride: Int { width + 8 }
        var cStride: Int { width / 2 + 8 }

        init(width: Int, height: Int) {
            self.width = width
            self.height = height
            y = [UInt8](repeating: 0xA5, count: (width + 8) * height)
            u = [UInt8](repeating: 0xA5, count: (width / 2 + 8) * (height / 2))
            v = u
        }

        enum Path { case kernel, sse2, scalar }

        mutating func convert(_ bgrx: [UInt8], rect: (Int, Int, Int, Int), path: Path) {
            let (ys, cs) = (yStride, cStride)
            y.withUnsafeMutableBufferPointer { py in
                u.withUnsafeMutableBufferPointer { pu in
                    v.withUnsafeMutableBufferPointer { pv in
                        bgrx.withUnsafeBufferPointer { src in
                            let planes = I420Converter.Planes(y: py.baseAddress!, yStride: ys, u: pu.baseAddress!,
                                                              uStride: cs, v: pv.baseAddress!, vStride: cs)
                            let r = (x0: rect.0, y0: rect.1, x1: rect.2, y1: rect.3)
                            switch path {
                            case .kernel:
                                I420Converter.convert(bgrx: src.baseAddress!, stride: width * 4, into: planes, rect: r)
                            case .sse2:
                                ck_bgrx_to_i420_sse2(src.baseAddress!, Int32(width * 4), planes.y, Int32(ys), planes.u,
                                                     Int32(cs), planes.v, Int32(cs), Int32(r.x0), Int32(r.y0),
                                                     Int32(r.x1), Int32(r.y1))
                            case .scalar:
                                I420Converter.convertScalar(bgrx: src.baseAddress!, stride: width * 4, into: planes, rect: r)
                            }
                        }
                    }
                }
            }
        }
    }

    /// The C kernel (AVX2 where the CPU has it, and its SSE2 path) gives the bytes of the one-block-at-a-time
    /// path, for every colour (random pixels, extremes included) and for rectangles whose width is not a multiple
    /// of 16, at any even offset.
    @Test(arguments: [(0, 0, 96, 6), (2, 2, 50, 10), (14, 0, 96, 4), (0, 4, 34, 8), (30, 2, 32, 6), (0, 0, 2, 2)])
    func sixteenLanesGiveTheBytesOfOneBlockAtATime(rect: (Int, Int, Int, Int)) {
        let width = 96, height = 12
        var rng = SystemRandomNumberGenerator()
        var bgrx = (0..<(width * height * 4)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        // Pure extremes in the first row: black, white, each primary.
        let extremes: [[UInt8]] = [[0, 0, 0], [255, 255, 255], [255, 0, 0], [0, 255, 0], [0, 0, 255]]
        for (i, c) in extremes.enumerated() { bgrx[i * 4] = c[0]; bgrx[i * 4 + 1] = c[1]; bgrx[i * 4 + 2] = c[2] }
        var fast = Planes(width: width, height: height), slow = fast, sse2 = fast
        fast.convert(bgrx, rect: rect, path: .kernel)
        sse2.convert(bgrx, rect: rect, path: .sse2)
        slow.convert(bgrx, rect: rect, path: .scalar)
        #expect(fast.y == slow.y && sse2.y == slow.y)
        #expect(fast.u == slow.u && sse2.u == slow.u)
        #expect(fast.v == slow.v && sse2.v == slow.v)
        // Outside the rectangle nothing was written.
        #expect(fast.y[fast.yStride * (height - 1) + width + 4] == 0xA5)
        let touched = fast.y.enumerated().filter { $0.element != 0xA5 }.map { $0.offset }
        #expect(touched.allSatisfy { i in
            let (row, col) = (i / fast.yStride, i % fast.yStride)
            return row >= rect.1 && row < rect.3 && col >= rect.0 && col < rect.2
        })
    }

    /// BT.709 limited range: black is 16, white 235, grey has neutral chroma.
    @Test func blackWhiteAndGreyLandOnTheLimitedRange() {
        let width = 32, height = 2
        for (value, luma) in [(UInt8(0), UInt8(16)), (255, 235)] {
            let bgrx = [UInt8](repeating: value, count: width * height * 4)
            var p = Planes(width: width, height: height)
            p.convert(bgrx, rect: (0, 0, width, height), path: .kernel)
            #expect(p.y[0] == luma && p.y[width - 1] == luma && p.y[p.yStride] == luma)
            #expect(p.u[0] == 128 && p.v[width / 2 - 1] == 128)
        }
    }
}
