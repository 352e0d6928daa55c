/// A web page drawn by WPE WebKit in a process of its own (PageProcess): each frame shows the newest picture the
/// page made, at the widget's pixel size, with its transparency over what lies below. Before the page's first
/// picture, and while its page is being started again, it shows its background (a `background` style) or its last
/// good picture.
public final class WebWidget: WidgetBase, Widget {
    public typealias Config = WebConfig

    public let config: Config
    /// Where the page's pictures come from: set when its page starts (nil in a snapshot without pages).
    private(set) var frames: PageFrames?
    /// The page's size in pixels: the widget's box less its padding.
    public private(set) var pageSize: PixelSize?
    /// A rendition's web widget shows the page of the same widget in the main picture (one page per widget, at the
    /// main picture's box size), scaled to fit its own box; it never sets the page's size.
    private weak var leader: WebWidget?
    /// Where this widget's pictures come from now: its leader's page, or its own.
    private var source: PageFrames? { leader?.frames ?? frames }

    public init(id: String, style: Style, config: Config) {
        self.config = config
        super.init(id: id, style: style)
    }

    /// Shows `leader`'s page (the same widget in the main picture) from now on.
    func follow(_ leader: WebWidget) { self.leader = leader }

    /// Takes pictures from `frames` from now on, and tells it the size the page should have.
    func attach(_ frames: PageFrames) {
        self.frames = frames
        if let pageSize { frames.want(pageSize) }
    }

    public func layout(box: Rect, frame: PixelSize, engine: TextEngine) {
        place(box: box, frame: frame)
        let size = Self.pageSize(in: content)
        pageSize = size
        if leader == nil { frames?.want(size) }
    }

    /// The page's size in whole pixels for a content box.
    static func pageSize(in content: Rect) -> PixelSize {
        PixelSize(width: max(1, Int(content.width.rounded(.down))), height: max(1, Int(content.height.rounded(.down))))
    }

    /// The size each web widget of `scene` will give its page at picture size `size` (none for a widget hidden
    /// there): what a resize asked for will lay out, known before the frame loop applies it.
    static func pageSizes(of scene: Scene, at size: PixelSize) -> [String: PixelSize] {
        let boxes = scene.dock(at: size).boxes
        var sizes: [String: PixelSize] = [:]
        for spec in scene.widgets where spec.config is WebConfig {
            guard let box = boxes[spec.id] else { continue }
            sizes[spec.id] = pageSize(in: content(of: box, frame: size, padding: spec.style.padding))
        }
        return sizes
    }

    public func draw(on canvas: Canvas, at time: FrameTime) {
        drawPanel(on: canvas)
        // (Taken twice in a frame, by the main picture's widget and a rendition's, it is the same picture.)
        guard let (picture, opaque) = source?.take() else { return }
        if leader != nil {
            // The main picture's page, scaled to fit this box, its shape kept.
            let w = Double(picture.width), h = Double(picture.height), k = min(content.width / w, content.height / h)
            let dest = Rect(x: content.x + (content.width - w * k) / 2, y: content.y + (content.height - h * k) / 2,
                            width: w * k, height: h * k)
            canvas.draw(picture, in: dest, clip: content)
            return
        }
        let dest = Rect(x: content.x.rounded(.down), y: content.y.rounded(.down), width: Double(picture.width),
                        height: Double(picture.height))
        // A page that covers its box is copied, not blended: a fifth of the cost of a full 1280x720 blend.
        canvas.draw(picture, in: dest, clip: content, replacing: opaque && style.cornerRadius == 0)
    }

    /// An opaque page that covers its box paints every pixel of it: what lies below need not be put back first.
    public func paintsOpaquely(_ region: Rect, at time: FrameTime) -> Bool {
        guard leader == nil, let frames, let size = pageSize, style.cornerRadius == 0, frames.nextIsOpaque else { return false }
        let page = Rect(x: content.x.rounded(.down), y: content.y.rounded(.down), width: Double(size.width),
                        height: Double(size.height))
        return content.contains(region, tolerance: 0) && page.contains(region, tolerance: 0)
    }

    public func appearance(at time: FrameTime) -> Appearance {
        Appearance(Int64(version), Int64(truncatingIfNeeded: source?.newest ?? 0))
    }
}

extension WebConfig: WidgetMaking {
    public func make(id: String, style: Style, warn: @escaping (String) -> Void) -> any Widget {
        WebWidget(id: id, style: style, config: self)
    }
}

extension WebWidget: InputWidget {
    /// One page per widget, served from one page server, as one input.
    static func liveInputs(for widgets: [WebWidget], context: InputContext) -> [any SessionInput] {
        do {
            return try pages(for: widgets, context: context).map { [$0] } ?? []
        } catch {
            context.warn("web widgets show nothing: their pages cannot be served: \(error)")
            return []
        }
    }

    /// Each page shows once it has loaded and drawn (or its widget its background, after `web.loadTimeout`).
    static func still(for widgets: [WebWidget], at: Double, context: InputContext) throws -> (any SessionInput)? {
        guard let pages = try pages(for: widgets, context: context) else { return nil }
        pages.start()
        for page in pages.pages where !page.waitUntilDrawn(timeout: context.web.loadTimeout) {
            context.warn("web '\(page.id)': no picture within \(Int(context.web.loadTimeout)) s; drawing its background")
        }
        return pages
    }

    private static func pages(for widgets: [WebWidget], context: InputContext) throws -> PageSet? {
        try PageSet(widgets: widgets, folder: context.scene.folder, fps: context.scene.fps, picture: context.picture,
                    settings: context.web, state: context.pageState, onEvent: context.onEvent)
    }

    func follow(leaderIn main: Renderer) {
        if let leader = main.widget(id: id) as? WebWidget { follow(leader) }
    }
}
