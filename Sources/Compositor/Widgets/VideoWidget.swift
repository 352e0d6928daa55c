import Foundation

/// A video layer: the newest frame of its input (`VideoInput`, which scales it to this box in GStreamer, the
/// picture's shape kept) painted at each output frame, with rounded corners and an opacity. Without a frame yet,
/// or while the input is lost, it shows the last frame dimmed (or a dark box) with "no signal".
///
/// Its appearance changes exactly when a new input frame arrived (or the signal came or went), so an idle input
/// costs nothing. It counts input frames shown, frames shown again, and frames it never showed.
public final class VideoWidget: WidgetBase, Widget {
    public struct Config: Equatable, Sendable {
        public var source: VideoSource = .test(pattern: "smpte")
        /// A file starts again at its end.
        public var loop = true
        public var opacity = 1.0
        public init() {}
    }

    public let config: Config
    /// Where the input puts its frames; the session attaches an input to it (a snapshot has none).
    public let slot = VideoFrameSlot()
    private var engine: TextEngine?
    private var label: TextLayout?
    private var lastPainted: UInt64 = 0

    public init(id: String, style: Style, config: Config) {
        self.config = config
        super.init(id: id, style: style)
    }

    public func layout(box: Rect, frame: PixelSize, engine: TextEngine) {
        place(box: box, frame: frame)
        self.engine = engine
        let size = PixelSize(width: max(2, Int(content.width.rounded()) & ~1), height: max(2, Int(content.height.rounded()) & ~1))
        slot.want(size)
        let px = max(8, min(content.height / 8, content.width / 12))
        label = TextLayout(engine: engine, text: "no signal", font: style.font, pixelSize: px, width: content.width,
                           alignment: .center)
    }

    public func draw(on canvas: Canvas, at time: FrameTime) {
        drawPanel(on: canvas)
        let radius = style.cornerRadius * scale
        let frame = slot.frame
        if let frame {
            frame.buffer.withBytes { bytes in
                canvas.paint(bgrx: bytes, size: frame.size, stride: frame.size.width * 4, in: fitted(frame.size),
                             clip: content, radius: radius, opacity: config.opacity)
            }
            if frame.sequence != lastPainted {
                lastPainted = frame.sequence
                slot.painted(frame)
            }
        } else {
            canvas.fillRounded(content, radius: radius, Color(red: 0.08, green: 0.08, blue: 0.1))
        }
        if !slot.hasSignal {
            canvas.fillRounded(content, radius: radius, Color(red: 0, green: 0, blue: 0, alpha: frame == nil ? 0 : 0.55))
            if let label {
                label.draw(on: canvas, x: content.x, y: content.y + (content.height - label.height) / 2, color: style.secondaryColor)
            }
        }
    }

    /// The frame's rectangle in the content: the input scales to the content's size, so this is the content,
    /// except for a frame of another size (before the input followed a resize), fitted with its shape kept.
    private func fitted(_ size: PixelSize) -> Rect {
        let k = min(content.width / Double(size.width), content.height / Double(size.height))
        let w = Double(size.width) * k, h = Double(size.height) * k
        return Rect(x: content.x + (content.width - w) / 2, y: content.y + (content.height - h) / 2, width: w, height: h)
    }

    /// Called once per output frame by the renderer: counts the input frame this output frame shows.
    public func appearance(at time: FrameTime) -> Appearance {
        let sequence = slot.showing()
        return Appearance(Int64(version), Int64(sequence), slot.hasSignal ? 1 : 0)
    }
}
