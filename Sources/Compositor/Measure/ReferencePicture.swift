import Foundation

/// The picture a source drew for a frame, drawn again: the scene rendered at the frame number and wall-clock
/// time its timecode strip carries, at the decoded size, converted to luma exactly as the live path converts
/// it (BT.709, limited range). Compared with what a client decoded, it shows whether the viewer saw the right
/// picture, not only that a picture came.
///
/// Scene time is taken as frame ÷ fps: animations driven by it (ticker, progress) match unless the source was
/// paused; text built from live values (`{viewers}`, API edits) cannot be known here and differs.
public final class ReferencePicture {
    public let scene: Scene
    private var renderer: Renderer?

    public init(scene: Scene) {
        self.scene = scene
    }

    public func luma(for reading: TimecodeCodec.Reading, width: Int, height: Int) throws -> [UInt8] {
        let size = PixelSize(width: width, height: height)
        if renderer == nil { renderer = Renderer(scene: scene, size: size) }
        let r = renderer!
        if r.size != size { r.resize(to: size) }
        let time = FrameTime(frame: Int64(reading.frame), media: Double(reading.frame) / Double(scene.fps),
                             wall: Date(timeIntervalSince1970: Double(reading.wallMilliseconds) / 1000))
        let surface = try r.snapshot(at: time)
        return surface.withBytes { buf in
            var out = [UInt8](repeating: 0, count: width * height)
            let base = buf.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let stride = surface.stride
            out.withUnsafeMutableBufferPointer { o in
                for y in 0..<height {
                    for x in 0..<width { o[y * width + x] = I420Converter.luma(base + y * stride + x * 4) }
                }
            }
            return out
        }
    }
}
