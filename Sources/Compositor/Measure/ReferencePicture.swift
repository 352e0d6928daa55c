import CKernels
import Foundation

/// The picture a source drew for a frame, drawn again: the scene rendered at the frame number and wall-clock
/// time its timecode strip carries, at the decoded size, converted to luma exactly as the live path converts
/// it (BT.709, limited range). Compared with what a client decoded, it shows whether the viewer saw the right
/// picture, not only that a picture came.
///
/// Scene time is a whole number of frames ÷ fps: the strip's frame number unless the source was paused, and the
/// frames a pause held it back otherwise (`SceneFrameTracker` finds them); text built from live values (`{viewers}`, API edits) cannot be known here and differs. The boxes of web
/// and video widgets cannot be known either (a page's or a camera's pixels): they are left out of the comparison
/// (`excluded`), the decoded picture standing in for the reference there.
public final class ReferencePicture {
    public let scene: Scene
    private var renderer: Renderer?
    /// The surface the reference is drawn on, kept while the size stays.
    private var surface: ImageSurface?
    /// Where the conversion's chroma goes (not compared).
    private var chroma: [UInt8] = []
    /// The widgets whose boxes are left out: web pages and video layers.
    public let excluded: [String]

    public init(scene: Scene) {
        self.scene = scene
        excluded = scene.widgets.filter(WidgetFactory.takesInput).map(\.id)
    }

    /// The boxes of the excluded widgets at the size last drawn, in whole pixels inside the picture.
    func excludedBoxes() -> [(x0: Int, y0: Int, x1: Int, y1: Int)] {
        guard let r = renderer else { return [] }
        return excluded.compactMap { id in
            guard let w = r.widget(id: id), w.box.width > 0, w.box.height > 0 else { return nil }
            let x0 = max(0, Int(w.box.x.rounded(.down))), y0 = max(0, Int(w.box.y.rounded(.down)))
            let x1 = min(r.size.width, Int((w.box.x + w.box.width).rounded(.up)))
            let y1 = min(r.size.height, Int((w.box.y + w.box.height).rounded(.up)))
            return x1 > x0 && y1 > y0 ? (x0, y0, x1, y1) : nil
        }
    }

    /// The reference for a decoded picture showing scene frame `scene`, written into `out` (resized to fit): its
    /// luma, with the excluded boxes taken from `decoded` itself.
    func luma(for reading: TimecodeCodec.Reading, scene: UInt64, decoded: [UInt8], width: Int, height: Int,
              into out: inout [UInt8]) throws {
        try luma(for: reading, scene: scene, width: width, height: height, into: &out)
        for b in excludedBoxes() {
            for y in b.y0..<b.y1 { out.replaceSubrange(y * width + b.x0..<y * width + b.x1, with: decoded[y * width + b.x0..<y * width + b.x1]) }
        }
    }

    /// The picture of frame `reading.frame` showing scene frame `scene` (the frame itself when nothing paused).
    public func luma(for reading: TimecodeCodec.Reading, scene: UInt64? = nil, width: Int, height: Int) throws -> [UInt8] {
        var out: [UInt8] = []
        try luma(for: reading, scene: scene, width: width, height: height, into: &out)
        return out
    }

    /// The same, written into `out` (resized to `width*height`). A probe compares every frame it can: the surface
    /// drawn on and `out` are kept from one frame to the next, so a frame costs the drawing and no fresh memory
    /// (a new 720p surface and plane each frame were a third of a probe's time, in the kernel faulting them in).
    func luma(for reading: TimecodeCodec.Reading, scene: UInt64? = nil, width: Int, height: Int,
              into out: inout [UInt8]) throws {
        let size = PixelSize(width: width, height: height)
        if renderer == nil { renderer = Renderer(scene: self.scene, size: size) }
        let r = renderer!
        if r.size != size { r.resize(to: size) }
        let time = FrameTime(frame: Int64(reading.frame), media: Double(scene ?? reading.frame) / Double(self.scene.fps),
                             wall: Date(timeIntervalSince1970: Double(reading.wallMilliseconds) / 1000))
        if surface?.width != width || surface?.height != height {
            surface = try ImageSurface(width: width, height: height)
        }
        let surface = surface!
        r.snapshot(at: time, into: surface)
        if out.count != width * height { out = [UInt8](repeating: 0, count: width * height) }
        surface.withBytes { buf in
            let base = buf.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let stride = surface.stride
            out.withUnsafeMutableBufferPointer { o in
                guard width % 2 == 0 && height % 2 == 0 else {
                    for y in 0..<height {
                        for x in 0..<width { o[y * width + x] = I420Converter.luma(base + y * stride + x * 4) }
                    }
                    return
                }
                // The live path's own kernel (the same bytes as the loop above, in SIMD); its chroma is not wanted,
                // so every row pair writes it over one row of scratch (a stride of 0).
                if chroma.count != width { chroma = [UInt8](repeating: 0, count: width) }
                chroma.withUnsafeMutableBufferPointer { c in
                    ck_bgrx_to_i420(base, Int32(stride), o.baseAddress!, Int32(width), c.baseAddress!, 0,
                                    c.baseAddress! + width / 2, 0, 0, 0, Int32(width), Int32(height))
                }
            }
        }
    }
}
