import CKernels

/// BGRx → I420 (BT.709, limited range) for rectangles of a frame.
///
/// Why our own: the encoder wants 4:2:0, and converting whole frames costs as much as half an ultrafast encode
/// at 720p. The renderer knows which rectangles changed, so only those are converted into a buffer that
/// already holds the rest of the picture.
public enum I420Converter {
    /// The three planes of an I420 frame.
    public struct Planes {
        public var y: UnsafeMutablePointer<UInt8>
        public var yStride: Int
        public var u: UnsafeMutablePointer<UInt8>
        public var uStride: Int
        public var v: UnsafeMutablePointer<UInt8>
        public var vStride: Int

        public init(y: UnsafeMutablePointer<UInt8>, yStride: Int, u: UnsafeMutablePointer<UInt8>, uStride: Int,
                    v: UnsafeMutablePointer<UInt8>, vStride: Int) {
            self.y = y
            self.yStride = yStride
            self.u = u
            self.uStride = uStride
            self.v = v
            self.vStride = vStride
        }
    }

    /// Grows `r` to even pixel edges (chroma covers 2x2 pixels) and clips it to the picture.
    public static func aligned(_ r: Rect, width: Int, height: Int) -> (x0: Int, y0: Int, x1: Int, y1: Int)? {
        let x0 = max(0, Int(r.minX.rounded(.down)) & ~1), y0 = max(0, Int(r.minY.rounded(.down)) & ~1)
        var x1 = min(width, Int(r.maxX.rounded(.up))), y1 = min(height, Int(r.maxY.rounded(.up)))
        x1 = min(width & ~1, (x1 + 1) & ~1)
        y1 = min(height & ~1, (y1 + 1) & ~1)
        return x1 > x0 && y1 > y0 ? (x0, y0, x1, y1) : nil
    }

    /// Converts the pixels of `rect` (even-aligned, inside the picture) from `bgrx` into `planes`.
    ///
    /// In C (CKernels): sixteen pixels of two rows a step in vector lanes, AVX2 where the CPU has it; the same
    /// bytes as `convertScalar`, about ten times faster.
    public static func convert(bgrx: UnsafePointer<UInt8>, stride: Int, into p: Planes,
                               rect: (x0: Int, y0: Int, x1: Int, y1: Int)) {
        ck_bgrx_to_i420(bgrx, Int32(stride), p.y, Int32(p.yStride), p.u, Int32(p.uStride), p.v, Int32(p.vStride),
                        Int32(rect.x0), Int32(rect.y0), Int32(rect.x1), Int32(rect.y1))
    }

    /// The inverse, for the pixels of `rect` of an I420 picture written into `bgrx` (row `stride`) at the same place
    /// shifted by `offset` (the picture's top-left in the BGRx image).
    public static func toBGRx(from p: Planes, into bgrx: UnsafeMutablePointer<UInt8>, stride: Int,
                              rect: (x0: Int, y0: Int, x1: Int, y1: Int), offset: (x: Int, y: Int)) {
        ck_i420_to_bgrx(p.y, Int32(p.yStride), p.u, Int32(p.uStride), p.v, Int32(p.vStride),
                        bgrx + offset.y * stride + offset.x * 4, Int32(stride),
                        Int32(rect.x0), Int32(rect.y0), Int32(rect.x1), Int32(rect.y1))
    }

    /// Copies the whole of one I420 picture into another of the same size, plane by plane, row by row.
    public static func copy(_ from: Planes, into to: Planes, size: PixelSize) {
        func rows(_ src: UnsafeMutablePointer<UInt8>, _ ss: Int, _ dst: UnsafeMutablePointer<UInt8>, _ ds: Int, _ w: Int, _ h: Int) {
            if ss == ds && ss == w { dst.update(from: src, count: w * h); return }
            for r in 0..<h { (dst + r * ds).update(from: src + r * ss, count: w) }
        }
        rows(from.y, from.yStride, to.y, to.yStride, size.width, size.height)
        rows(from.u, from.uStride, to.u, to.uStride, size.width / 2, size.height / 2)
        rows(from.v, from.vStride, to.v, to.vStride, size.width / 2, size.height / 2)
    }

    /// The 2x2 blocks of two rows from `from` to `to`, one at a time.
    @inline(__always)
    static func convertScalar(row0: UnsafePointer<UInt8>, row1: UnsafePointer<UInt8>, y0: UnsafeMutablePointer<UInt8>,
                              y1: UnsafeMutablePointer<UInt8>, u: UnsafeMutablePointer<UInt8>,
                              v: UnsafeMutablePointer<UInt8>, from: Int, to: Int) {
        var x = from
        while x < to {
            let a = row0 + x &* 4, b = a + 4, c = row1 + x &* 4, d = c + 4
            // Luma of each of the 2x2 pixels: Y = 16 + (47 R + 157 G + 16 B) / 256.
            y0[x] = luma(a)
            y0[x &+ 1] = luma(b)
            y1[x] = luma(c)
            y1[x &+ 1] = luma(d)
            // Chroma of their average.
            let r = Int32(a[2]) &+ Int32(b[2]) &+ Int32(c[2]) &+ Int32(d[2])
            let g = Int32(a[1]) &+ Int32(b[1]) &+ Int32(c[1]) &+ Int32(d[1])
            let bl = Int32(a[0]) &+ Int32(b[0]) &+ Int32(c[0]) &+ Int32(d[0])
            u[x >> 1] = UInt8(truncatingIfNeeded: ((-26 &* r &- 86 &* g &+ 112 &* bl &+ 512) >> 10) &+ 128)
            v[x >> 1] = UInt8(truncatingIfNeeded: ((112 &* r &- 102 &* g &- 10 &* bl &+ 512) >> 10) &+ 128)
            x &+= 2
        }
    }

    /// The same conversion one 2x2 block at a time: the reference the SIMD path is tested against.
    public static func convertScalar(bgrx: UnsafePointer<UInt8>, stride: Int, into p: Planes,
                                     rect: (x0: Int, y0: Int, x1: Int, y1: Int)) {
        var y = rect.y0
        while y < rect.y1 {
            let row0 = bgrx + y &* stride
            convertScalar(row0: row0, row1: row0 + stride, y0: p.y + y &* p.yStride, y1: p.y + (y + 1) &* p.yStride,
                          u: p.u + (y >> 1) &* p.uStride, v: p.v + (y >> 1) &* p.vStride, from: rect.x0, to: rect.x1)
            y &+= 2
        }
    }

    @inline(__always)
    static func luma(_ p: UnsafePointer<UInt8>) -> UInt8 {
        UInt8(truncatingIfNeeded: ((47 &* Int32(p[2]) &+ 157 &* Int32(p[1]) &+ 16 &* Int32(p[0]) &+ 128) >> 8) &+ 16)
    }
}
