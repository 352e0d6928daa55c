import CKernels
import CPango

/// An opaque text strip converted to I420 once, so that a frame which only scrolls it writes its planes as row
/// copies: no copy of its pixels into the canvas, no conversion of the band every frame.
///
/// Luma is per pixel and fits any position. Chroma covers 2x2 blocks of the picture, so it depends on the parity of
/// where the strip lands: both horizontal phases are kept (a scrolling strip lands on odd and even columns), and the
/// vertical phase of the rows it was made for (a strip's rows stay where the layout put them).
final class StripPlanes {
    let width: Int
    let height: Int
    /// Row `top & 1` of the picture the strip's first row lands on: which pairs of rows make a chroma row.
    let verticalPhase: Int
    /// `width` × `height` bytes of luma, row after row.
    let luma: UnsafeMutableBufferPointer<UInt8>
    /// For horizontal phase h (0, 1): chroma block (i, j) covers strip columns 2j − h, 2j − h + 1 and strip rows
    /// 2i − v, 2i − v + 1 (v the vertical phase); `chromaWidth[h]` blocks a row, `chromaRows` rows.
    let chromaWidth: [Int]
    let chromaRows: Int
    let u: [UnsafeMutableBufferPointer<UInt8>]
    let v: [UnsafeMutableBufferPointer<UInt8>]

    /// Converts the strip whose rows `copyRow(y, into:)` writes (`width` BGRx pixels of row `y`). Nil when there is
    /// no memory for the planes (a ticker of a great deal of text): the strip is then drawn as usual.
    init?(width: Int, height: Int, verticalPhase: Int, copyRow: (_ y: Int, _ into: UnsafeMutablePointer<UInt8>) -> Void) {
        let rows = (height + verticalPhase + 1) / 2
        // All five planes in one block (see ck_alloc_planes: large ones in 2 MB pages).
        let lumaBytes = max(1, width * height)
        let chromaBytes = (0...1).map { h in max(1, (width + h + 1) / 2 * rows) }
        guard let raw = ck_alloc_planes(lumaBytes + 2 * chromaBytes.reduce(0, +)) else { return nil }
        block = raw.assumingMemoryBound(to: UInt8.self)
        self.width = width
        self.height = height
        self.verticalPhase = verticalPhase
        // The strip inside a border of one pixel (and one more column and row to spare), so the blocks of either
        // phase that reach past its edges read memory that is there; those blocks are never used.
        let paddedWidth = width + 3, paddedHeight = height + 3, paddedStride = paddedWidth * 4
        let padded = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: paddedStride * paddedHeight)
        padded.initialize(repeating: 0)
        defer { padded.deallocate() }
        for y in 0..<height { copyRow(y, padded.baseAddress! + (y + 1) * paddedStride + 4) }
        chromaRows = rows
        var widths: [Int] = [], us: [UnsafeMutableBufferPointer<UInt8>] = [], vs: [UnsafeMutableBufferPointer<UInt8>] = []
        var next = block
        func carve(_ n: Int) -> UnsafeMutableBufferPointer<UInt8> {
            defer { next += n }
            return UnsafeMutableBufferPointer(start: next, count: n)
        }
        let lumaPlane = carve(lumaBytes)
        for h in 0...1 {
            let blocks = (width + h + 1) / 2
            let scratchStride = 2 * blocks
            let scratch = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: scratchStride * 2 * rows)
            defer { scratch.deallocate() }
            let pu = carve(chromaBytes[h])
            let pv = carve(chromaBytes[h])
            // Scratch pixel (x, y) is strip pixel (x − h, y − v): the padded strip read from column 1 − h, row 1 − v.
            let base = padded.baseAddress! + (1 - verticalPhase) * paddedStride + (1 - h) * 4
            ck_bgrx_to_i420(base, Int32(paddedStride), scratch.baseAddress!, Int32(scratchStride), pu.baseAddress!,
                            Int32(blocks), pv.baseAddress!, Int32(blocks), 0, 0, Int32(2 * blocks), Int32(2 * rows))
            if h == 0 {
                for y in 0..<height {
                    (lumaPlane.baseAddress! + y * width).update(from: scratch.baseAddress! + (y + verticalPhase) * scratchStride,
                                                                count: width)
                }
            }
            widths.append(blocks)
            us.append(pu)
            vs.append(pv)
        }
        luma = lumaPlane
        chromaWidth = widths
        u = us
        v = vs
    }

    /// The one allocation the planes lie in.
    private let block: UnsafeMutablePointer<UInt8>

    deinit { free(block) }
}
