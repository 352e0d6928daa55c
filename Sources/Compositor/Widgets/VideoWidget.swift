import Foundation

/// A video layer: the newest frame of its input (`VideoInput`, which scales it to this box in GStreamer, the
/// picture's shape kept) painted at each output frame, with rounded corners and an opacity. Without a frame yet,
/// or while the input is lost, it shows its `fallback` image, else the last frame dimmed (or a dark box) with
/// "no signal".
///
/// Its appearance changes exactly when a new input frame arrived (or the signal came or went), so an idle input
/// costs nothing. It counts input frames shown, frames shown again, and frames it never showed.
public final class VideoWidget: WidgetBase, Widget {
    public struct Config: Equatable, Sendable {
        public var source: VideoSource = .test(pattern: "smpte")
        /// `fit` letterboxes the whole picture into the box, `fill` covers the box (cropped), `center` keeps the
        /// input's own size, centered and clipped to the box. The first two scale in GStreamer, `center` does not.
        public var fit = ImageFit.fit
        /// A file starts again at its end.
        public var loop = true
        public var opacity = 1.0
        /// A picture (PNG, JPEG, SVG) shown instead of "no signal" while the input has no picture.
        public var fallback: String?
        public init() {}
    }

    public private(set) var config: Config
    private var fallback: Picture?
    /// Where the input puts its frames; the session attaches an input to it (a snapshot has none).
    public let slot = VideoFrameSlot()
    private var engine: TextEngine?
    private var label: TextLayout?
    private var lastPainted: UInt64 = 0
    /// The input frame and signal of the output frame being drawn, taken once in `appearance`.
    private var current: VideoFrameSlot.Frame?
    private var signal = false

    public init(id: String, style: Style, config: Config, warn: @escaping (String) -> Void = { _ in }) {
        self.config = config
        super.init(id: id, style: style)
        if let path = config.fallback {
            do { fallback = try Picture.load(path: path) } catch {
                warn("widget '\(id)': fallback: \(error); showing 'no signal' instead")
            }
        }
    }

    /// Run-time changes (render thread): the source named (the session restarts the input), the opacity.
    public func update(source: VideoSource?, opacity: Double?) {
        if let source { config.source = source }
        if let opacity { config.opacity = opacity }
        version += 1
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
        let frame = current ?? slot.frame
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
        if !signal, let fallback {
            canvas.withState {
                canvas.clipRounded(content, radius: radius)
                canvas.paint(content, .black)
                fallback.draw(on: canvas, in: content, fit: .fit)
            }
        } else if !signal {
            canvas.fillRounded(content, radius: radius, Color(red: 0, green: 0, blue: 0, alpha: frame == nil ? 0 : 0.55))
            if let label {
                label.draw(on: canvas, x: content.x, y: content.y + (content.height - label.height) / 2, color: style.secondaryColor)
            }
        }
    }

    /// A whole frame at full opacity with square corners covers what is under it: nothing below needs drawing.
    public func paintsOpaquely(_ region: Rect, at time: FrameTime) -> Bool {
        guard config.opacity >= 1, style.cornerRadius == 0, let frame = current ?? slot.frame else { return false }
        return fitted(frame.size).intersection(content).map { $0.contains(region, tolerance: 0) } ?? false
    }

    /// The frame's rectangle in the content. The input scales to the content's size (rounded down to even), so a
    /// frame is normally painted at its own size, centered on whole pixels (a copy, not a resampling); so is every
    /// frame of a `center` layer. A frame of another size (before the input followed a resize) is scaled to fit or
    /// to cover the content, as the layer's `fit` says.
    func fitted(_ size: PixelSize) -> Rect {
        let w = Double(size.width), h = Double(size.height)
        let near = abs(content.width - w) < 2.5 && abs(content.height - h) < 2.5
        if config.fit == .center || near {
            return Rect(x: (content.x + (content.width - w) / 2).rounded(), y: (content.y + (content.height - h) / 2).rounded(),
                        width: w, height: h)
        }
        let kx = content.width / w, ky = content.height / h
        let k = config.fit == .fill ? max(kx, ky) : min(kx, ky)
        return Rect(x: content.x + (content.width - w * k) / 2, y: content.y + (content.height - h * k) / 2,
                    width: w * k, height: h * k)
    }

    /// Called once per output frame by the renderer: counts the input frame this output frame shows.
    public func appearance(at time: FrameTime) -> Appearance {
        current = slot.showing()
        signal = slot.hasSignal
        return Appearance(Int64(version), Int64(current?.sequence ?? 0), signal ? 1 : 0)
    }
}
