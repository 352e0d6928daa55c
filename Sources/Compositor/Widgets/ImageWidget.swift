/// An image (PNG, JPEG, SVG) fitted, filled or centered in its box; a placeholder when it cannot be loaded.
public final class ImageWidget: WidgetBase, Widget {
    public typealias Config = ImageConfig

    public private(set) var config: Config
    private var picture: Picture?
    private let warn: (String) -> Void

    public init(id: String, style: Style, config: Config, warn: @escaping (String) -> Void) {
        self.config = config
        self.warn = warn
        super.init(id: id, style: style)
        load()
    }

    /// Whether the image decoded; false means the placeholder shows.
    public var isLoaded: Bool { picture != nil }

    /// Swaps the image at run time; a bad file keeps the placeholder and warns.
    public func setSource(_ path: String) {
        config.source = path
        load()
        version += 1
    }

    private func load() {
        do { picture = try Picture.load(path: config.source) } catch {
            picture = nil
            warn("widget '\(id)': \(error); drawing a placeholder")
        }
    }

    public func layout(box: Rect, frame: PixelSize, engine: TextEngine) {
        place(box: box, frame: frame)
    }

    public func draw(on canvas: Canvas, at time: FrameTime) {
        drawPanel(on: canvas)
        if let picture { picture.draw(on: canvas, in: content, fit: config.fit) }
        else { canvas.placeholder(content, style.secondaryColor) }
    }

    public func appearance(at time: FrameTime) -> Appearance { Appearance(Int64(version)) }
}

extension ImageWidget {
    /// A live update, checked by `ImageConfig.change`, on the render thread.
    public func apply(_ change: any WidgetChange, at media: Double) {
        if let c = change as? ImageConfig.Change { setSource(c.source) }
    }
}

extension ImageConfig: WidgetMaking {
    public func make(id: String, style: Style, warn: @escaping (String) -> Void) -> any Widget {
        ImageWidget(id: id, style: style, config: self, warn: warn)
    }
}
