import Foundation

/// A rendition's own drawing (`--rendition`): the scene's renderer at the rendition's size, with the layout that
/// size gets, and the producer of its frames. The frame loop draws it at the same frame times as the main picture,
/// with the same widget updates, and only while some output carries it. Used only on the frame loop's thread.
public final class RenditionPicture {
    public let size: PixelSize
    let renderer: Renderer
    let producer: FrameProducer
    /// Frames drawn (wholly or in part) and sent again unchanged.
    var rendered: UInt64 = 0
    var repeated: UInt64 = 0
    /// Whether the last frame was drawn: the first one after a pause (nobody watched) is a key frame.
    var drawing = false

    public init(scene: Scene, size: PixelSize, fps: Int, warn: @escaping (String) -> Void) throws {
        self.size = size
        renderer = Renderer(scene: scene, size: size, warn: warn)
        producer = try FrameProducer(size: size, fps: fps)
    }

    /// Shows the frames of `main`'s video layers and web pages in this picture's widgets (each scaled to its own
    /// box): one input per layer and one page per web widget, whose size the main picture's widget sets.
    func share(_ main: Renderer) {
        for case let widget as any InputWidget in renderer.widgets { widget.follow(leaderIn: main) }
    }

    /// Draws one frame off the clock (fonts, glyphs and artwork loaded) and forgets it, before the loop starts.
    func warmUp() {
        _ = try? renderer.snapshot(at: FrameTime(frame: 0, media: 0, wall: Date()))
        renderer.invalidate()
    }

    /// The raw caps its frames carry, for its encoder.
    public var caps: String { producer.caps }
}
