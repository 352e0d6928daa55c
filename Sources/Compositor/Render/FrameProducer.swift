import Foundation

/// Turns the scene at a moment into an I420 video buffer with as little work as the picture allows.
///
/// The renderer draws only changed widgets onto one persistent BGRx canvas; only the rectangles it redrew
/// are converted to I420, into a pooled buffer that already holds an older frame (each buffer's memory carries
/// which frame it holds, and gets the union of the changes since). A frame that did not change at all is the
/// previous buffer sent again. No new buffer per frame, no whole-frame conversion.
public final class FrameProducer {
    public let size: PixelSize
    let surface: ImageSurface
    let canvas: Canvas
    let pool: FramePool
    private var history: [(frame: Int64, rects: [Rect], plate: Bool)] = []
    /// Frames up to this one are no longer in `history`.
    private var forgottenUpTo: Int64 = -1
    private var last: MediaBuffer?
    /// Two rows of working space for writing a DirectRegion (made once per size).
    private let scratch: UnsafeMutableRawBufferPointer
    /// Pixels converted to I420 so far: what the damage tracking saved shows against frames × picture size.
    public private(set) var convertedPixels: UInt64 = 0

    public init(size: PixelSize, fps: Int) throws {
        self.size = size
        surface = try ImageSurface(width: size.width, height: size.height)
        canvas = Canvas(surface: surface)
        pool = try FramePool(size: size, fps: fps, format: .i420)
        scratch = .allocate(byteCount: DirectRegion.scratchBytes(width: size.width), alignment: 32)
    }

    deinit { scratch.deallocate() }

    public var caps: String { pool.caps }

    /// The caps of the frames a producer of `size` makes, before it exists.
    public static func caps(size: PixelSize, fps: Int) -> String { FramePool.caps(size: size, fps: fps, format: .i420) }

    /// A copy of the picture last produced (the canvas keeps the whole frame once what `renderer` wrote straight into
    /// I420 is drawn there too): what viewers see now.
    public func copyOfPicture(_ renderer: Renderer? = nil) throws -> ImageSurface {
        renderer?.materializeDirect(on: canvas)
        let copy = try ImageSurface(width: size.width, height: size.height)
        let c = Canvas(surface: copy)
        if let renderer, let plate = renderer.platePicture, plate.size == size {
            // The canvas holds the picture only under the widgets: the plate's own frame around them.
            copy.withMutableBytes(dirty: (0, 0, size.width, size.height)) { bytes in
                _ = plate.buffer.withI420Planes(size: plate.size) { planes in
                    I420Converter.toBGRx(from: planes, into: bytes, stride: copy.stride,
                                         rect: (0, 0, plate.size.width, plate.size.height), offset: (0, 0))
                }
            }
            for r in renderer.plateCovered { c.copy(r, from: surface) }
        } else {
            c.copy(size.rect, from: surface)
        }
        copy.flush()
        return copy
    }

    /// Rectangles without repeats: widget boxes change in the same place frame after frame, and a buffer
    /// several frames old would otherwise convert the ticker's band once per frame it missed.
    static func distinct(_ rects: [Rect]) -> [Rect] {
        var out: [Rect] = []
        for r in rects.sorted(by: { $0.width * $0.height > $1.width * $1.height })
        where !out.contains(where: { $0.contains(r, tolerance: 0) }) {
            out.append(r)
        }
        return out
    }

    /// The previous frame's buffer, when nobody else holds it or its memory any more (the encoder is done with
    /// it): drawing into it converts only this frame's changes, and the same memory, still in cache, serves frame
    /// after frame. A pool rotates its buffers, so each one is several frames old and cold.
    private func takeReusableLast() -> MediaBuffer? {
        guard var buffer = last else { return nil }
        last = nil
        // Nobody else holds this object, the buffer, or its memory (the encoder is done with them).
        guard isKnownUniquelyReferenced(&buffer), buffer.isExclusive else { return nil }
        // A new frame: no flag of the old one (a DISCONT, a marker) carries over.
        buffer.clearFlags()
        return buffer
    }

    /// The buffer for `time` and whether anything was drawn for it. Stamp it before handing it on.
    public func produce(_ renderer: Renderer, at time: FrameTime) throws -> (MediaBuffer, drawn: Bool) {
        if let last, renderer.isUnchanged(at: time) {
            return (last.shallowCopy(), false)
        }
        let damage = renderer.render(on: canvas, at: time)
        history.append((time.frame, damage, renderer.plateRefreshed))
        if history.count > 32 {
            forgottenUpTo = history.removeFirst().frame
        }
        let buffer = try takeReusableLast() ?? pool.acquire()
        let bgrx = surface.pixels
        let stride = surface.stride
        // Which frame this memory holds is recorded on the memory itself: an address can come back for new
        // memory (a buffer the pool discarded, then a fresh one), whose contents are not that frame.
        let held = pool.frameHeld(in: buffer)
        try pool.withPlanes(buffer) { planes in
            var rects: [Rect]
            let since = held.flatMap { k in k >= forgottenUpTo ? history.filter { $0.frame > k } : nil }
            // A video plate: its I420 frame is copied as it is, and only where widgets lie over it is the canvas
            // converted (outside those boxes the canvas no longer holds the picture).
            if let plate = renderer.platePicture, plate.size == size, since == nil || since!.contains(where: \.plate) {
                let copied = plate.buffer.withI420Planes(size: plate.size) { from in I420Converter.copy(from, into: planes, size: size) }
                rects = renderer.plateCovered
                // A frame that cannot be read as I420: the next frame is drawn whole instead.
                if copied == nil { renderer.invalidate() }
            } else if let since {
                rects = since.flatMap(\.rects)
            } else {
                rects = [size.rect]
            }
            // A region written straight from strips below is not converted from the canvas (stale there) first.
            let direct = renderer.direct
            rects = Self.distinct(rects).filter { r in !direct.contains { $0.region == r } }
            for r in rects {
                if let a = I420Converter.aligned(r, width: size.width, height: size.height) {
                    I420Converter.convert(bgrx: bgrx, stride: stride, into: planes, rect: a)
                    convertedPixels += UInt64((a.x1 - a.x0) * (a.y1 - a.y0))
                }
            }
            // Last: these regions' pixels in the canvas are stale, and whatever the conversions above wrote there
            // is replaced.
            for d in direct { d.write(into: planes, bgrx: bgrx, stride: stride, scratch: scratch) }
        }
        pool.setFrameHeld(time.frame, in: buffer)
        last = buffer
        return (buffer, true)
    }
}
