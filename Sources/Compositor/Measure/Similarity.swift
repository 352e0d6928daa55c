import Foundation

/// How alike two 8-bit luma planes of one size are: PSNR and SSIM, the measures ffmpeg's `psnr` and `ssim`
/// filters report, so figures can be checked against them.
///
/// SSIM is computed the way libavfilter and x264 do: sums over 4x4 blocks, combined into 8x8 windows stepped by
/// 4 pixels, each window's SSIM from its means, variances and covariance, averaged over the windows. The
/// picture is also cut into a grid of regions, each with its own mean SSIM, so a report can say *where* a frame
/// went wrong (a smeared lower half, a damaged slice).
public struct Similarity: Sendable, Equatable, Codable {
    /// Luma PSNR in dB; `Double.infinity` is encoded as 100 (identical planes).
    public var psnr: Double
    public var ssim: Double
    /// The region with the lowest mean SSIM, as x, y, width, height in pixels, and its SSIM.
    public var worstRegion: [Int]
    public var worstRegionSSIM: Double

    /// Regions per side of the grid that `worstRegion` is taken from.
    public static let grid = 4

    /// Compares `a` and `b` (row-major, `width` bytes a row, no padding).
    public static func compare(_ a: [UInt8], _ b: [UInt8], width: Int, height: Int) -> Similarity {
        precondition(a.count == width * height && b.count == width * height, "planes must be width*height bytes")
        return a.withUnsafeBufferPointer { pa in
            b.withUnsafeBufferPointer { pb in compare(pa, pb, width: width, height: height) }
        }
    }

    static func compare(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>, width: Int, height: Int) -> Similarity {
        // PSNR over every pixel.
        // Wrapping arithmetic where nothing can overflow (a byte's square; sums of a few million): without the
        // overflow checks the compiler vectorizes these loops, which are most of a reference probe's time.
        var sse: UInt64 = 0
        for i in 0..<(width * height) {
            let d = Int32(a[i]) &- Int32(b[i])
            sse &+= UInt64(UInt32(bitPattern: d &* d))
        }
        let mse = Double(sse) / Double(max(1, width * height))
        let psnr = mse == 0 ? 100 : min(100, 10 * log10(255 * 255 / mse))

        // 4x4 block sums: s1 = Σa, s2 = Σb, ss = Σa² + Σb², s12 = Σab; two rows of blocks at a time (the windows
        // below span two), so a 720p comparison needs 10 KB of sums instead of 460 KB made and dropped each frame.
        let bw = width / 4, bh = height / 4
        guard bw >= 2 && bh >= 2 else {
            return Similarity(psnr: psnr, ssim: mse == 0 ? 1 : 0, worstRegion: [0, 0, width, height],
                              worstRegionSSIM: mse == 0 ? 1 : 0)
        }
        func blockRow(_ by: Int, into sums: inout [Int]) {
            for bx in 0..<bw {
                var s1 = 0, s2 = 0, ss = 0, s12 = 0
                for y in (by &* 4)..<(by &* 4 &+ 4) {
                    let row = y &* width &+ bx &* 4
                    for x in row..<(row &+ 4) {
                        let p = Int(a[x]), q = Int(b[x])
                        s1 &+= p; s2 &+= q; ss &+= p &* p &+ q &* q; s12 &+= p &* q
                    }
                }
                let k = bx * 4
                sums[k] = s1; sums[k + 1] = s2; sums[k + 2] = ss; sums[k + 3] = s12
            }
        }
        // 8x8 windows: each is 2x2 blocks.
        let c1 = 0.01 * 0.01 * 255 * 255 * 64
        let c2 = 0.03 * 0.03 * 255 * 255 * 64 * 63
        let g = grid
        var regionSum = [Double](repeating: 0, count: g * g)
        var regionCount = [Int](repeating: 0, count: g * g)
        var total = 0.0
        var upper = [Int](repeating: 0, count: bw * 4), lower = upper
        blockRow(0, into: &upper)
        for wy in 0..<(bh - 1) {
            blockRow(wy + 1, into: &lower)
            for wx in 0..<(bw - 1) {
                let k = wx * 4
                let s1 = upper[k] + upper[k + 4] + lower[k] + lower[k + 4]
                let s2 = upper[k + 1] + upper[k + 5] + lower[k + 1] + lower[k + 5]
                let ss = upper[k + 2] + upper[k + 6] + lower[k + 2] + lower[k + 6]
                let s12 = upper[k + 3] + upper[k + 7] + lower[k + 3] + lower[k + 7]
                let f1 = Double(s1), f2 = Double(s2)
                let vars = Double(ss) * 64 - f1 * f1 - f2 * f2
                let covar = Double(s12) * 64 - f1 * f2
                let v = (2 * f1 * f2 + c1) * (2 * covar + c2) / ((f1 * f1 + f2 * f2 + c1) * (vars + c2))
                total += v
                // The region of the window's centre.
                let cx = min(g - 1, (wx * 4 + 4) * g / width), cy = min(g - 1, (wy * 4 + 4) * g / height)
                regionSum[cy * g + cx] += v
                regionCount[cy * g + cx] += 1
            }
            swap(&upper, &lower)
        }
        let ssim = total / Double((bw - 1) * (bh - 1))
        var worst = 0
        var worstValue = Double.infinity
        for r in 0..<(g * g) where regionCount[r] > 0 {
            let m = regionSum[r] / Double(regionCount[r])
            if m < worstValue { worstValue = m; worst = r }
        }
        let rw = width / g, rh = height / g
        return Similarity(psnr: psnr, ssim: ssim, worstRegion: [worst % g * rw, worst / g * rh, rw, rh],
                          worstRegionSSIM: worstValue.isFinite ? worstValue : ssim)
    }
}
