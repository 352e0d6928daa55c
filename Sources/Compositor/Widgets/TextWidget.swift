/// A styled label: wraps to its box, ellipsizes what does not fit, sizes its type to the box unless the
/// style fixes it. `{viewers}` in the text shows the live RTSP viewer count.
public final class TextWidget: WidgetBase, Widget {
    public typealias Config = TextConfig

    public private(set) var config: Config {
        didSet { showsViewers = config.text.contains("{viewers}"); filled = nil }
    }
    /// Whether the text has the `{viewers}` placeholder: looked up once per text, not every frame (a search in a
    /// non-ASCII string goes through Foundation's Unicode folding, a sixth of a static scene's frame loop).
    private var showsViewers: Bool
    /// The text last filled in, and for which viewer count: the count changes seldom, frames come 30 times a second.
    private var filled: (viewers: Int, text: String)?
    private var layoutResult: TextLayout?
    private var engine: TextEngine?
    private var frameSize = PixelSize(width: 1280, height: 720)
    private var origin = (x: 0.0, y: 0.0)
    /// The text as last laid out, placeholders filled.
    private var shownText: String?

    public init(id: String, style: Style, config: Config) {
        self.config = config
        showsViewers = config.text.contains("{viewers}")
        super.init(id: id, style: style)
    }

    public var lineCount: Int { layoutResult?.lineCount ?? 0 }
    public var isEllipsized: Bool { layoutResult?.isEllipsized ?? false }

    /// Replaces the text at run time.
    public func setText(_ text: String) {
        config.text = text
        version += 1
        if let engine { layout(box: box, frame: frameSize, engine: engine) }
    }

    /// The text with live values put in.
    func resolved(at time: FrameTime?) -> String {
        guard showsViewers else { return config.text }
        let viewers = time?.viewers ?? 0
        if let filled, filled.viewers == viewers { return filled.text }
        let text = config.text.replacingOccurrences(of: "{viewers}", with: String(viewers))
        filled = (viewers, text)
        return text
    }

    public func layout(box: Rect, frame: PixelSize, engine: TextEngine) {
        layout(box: box, frame: frame, engine: engine, text: resolved(at: nil))
    }

    private func layout(box: Rect, frame: PixelSize, engine: TextEngine, text: String) {
        place(box: box, frame: frame)
        self.engine = engine
        frameSize = frame
        shownText = text
        let c = content
        guard c.width >= 1, c.height >= 1 else { layoutResult = nil; return }
        let size: Double
        let lineRatio = TextLayout(engine: engine, text: "Ag", font: style.font, pixelSize: 100).height / 100
        if let fixed = style.fontSize {
            // A fixed size still never exceeds one line of the box.
            size = max(4, min(fixed * scale, (c.height / lineRatio).rounded(.down)))
        } else {
            // Auto: the largest size at which the whole text wraps into the box, within 8 % of the box height.
            var s = max(6, min(c.height, c.height * 0.9 / Double(max(1, config.maxLines ?? 1))))
            while s > 6 {
                let l = TextLayout(engine: engine, text: text, font: style.font, pixelSize: s, width: c.width,
                                   maxLines: 1000, alignment: config.alignment, ellipsize: false)
                let fitsLines = config.maxLines.map { l.lineCount <= $0 } ?? true
                if l.height <= c.height && fitsLines { break }
                s = (s * 0.9).rounded(.down)
            }
            size = max(4, s)
        }
        // How many lines fit at this size, then ellipsize the rest.
        let line = lineRatio * size
        var lines = max(1, Int((c.height / max(1, line)).rounded(.down)))
        if let m = config.maxLines { lines = min(lines, m) }
        var l = TextLayout(engine: engine, text: text, font: style.font, pixelSize: size, width: c.width,
                           maxLines: lines, alignment: config.alignment)
        while l.height > c.height + 0.01 && lines > 1 {
            lines -= 1
            l = TextLayout(engine: engine, text: text, font: style.font, pixelSize: size, width: c.width,
                           maxLines: lines, alignment: config.alignment)
        }
        layoutResult = l
        origin = (c.x, c.y + max(0, (c.height - l.height) / 2))
        record(l, x: origin.x, y: origin.y)
    }

    public func draw(on canvas: Canvas, at time: FrameTime) {
        let text = resolved(at: time)
        if text != shownText, let engine { layout(box: box, frame: frameSize, engine: engine, text: text) }
        drawPanel(on: canvas)
        guard let l = layoutResult else { return }
        canvas.withState {
            canvas.clip(to: box)
            l.draw(on: canvas, x: origin.x, y: origin.y, color: style.color)
        }
    }

    public func appearance(at time: FrameTime) -> Appearance { Appearance(Int64(version), text: resolved(at: time)) }
}

extension TextWidget {
    /// A live update, checked by `TextConfig.change`, on the render thread.
    public func apply(_ change: any WidgetChange, at media: Double) {
        if let c = change as? TextConfig.Change { setText(c.text) }
    }
}

extension TextConfig: WidgetMaking {
    public func make(id: String, style: Style, warn: @escaping (String) -> Void) -> any Widget {
        TextWidget(id: id, style: style, config: self)
    }
}
