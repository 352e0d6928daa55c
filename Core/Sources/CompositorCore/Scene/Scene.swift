/// A validated scene: what the picture shows and how it is laid out. Built by `SceneLoader` from YAML/JSON.
public struct Scene: Sendable {
    public enum Background: Equatable, Sendable {
        case color(Color)
        /// Colours spread evenly along a line at `angle` degrees (0 = left to right, 90 = top to bottom).
        case gradient(stops: [Color], angle: Double)
        case image(path: String, fit: ImageFit, fallback: Color)
    }

    public enum Timeline: Equatable, Sendable {
        /// Infinite time range: skipping is refused.
        case live
        /// A finite scene of this many seconds: skipping moves within it; a recording ends at the end.
        case finite(duration: Double)
    }

    /// One entry of `widgets:`: what it is (its configuration, which knows its type's schema), where it goes and
    /// how it looks.
    public struct WidgetSpec: Sendable {
        public var id: String
        public var config: any WidgetConfig
        public var placement: Placement
        public var style: Style
        /// Drawing order where boxes overlap (lower first); equal z keeps the scene's order. Defaults: -1 for a
        /// background, 1 for an inset, 0 for docked widgets.
        public var z: Int
        /// Where the scene gives it (`FILE:LINE:COLUMN` of its entry), so that a warning about it (a picture that
        /// cannot be drawn) says where to look; nil for one made otherwise.
        public var origin: String?

        /// The `type:` of the entry.
        public var type: String { Swift.type(of: config).type }

        public init(id: String, config: any WidgetConfig, placement: Placement, style: Style, z: Int? = nil,
                    origin: String? = nil) {
            self.id = id
            self.origin = origin
            self.config = config
            self.placement = placement
            self.style = style
            self.z = z ?? {
                switch placement.float {
                case .background: -1
                case .inset: 1
                case nil: 0
                }
            }()
        }
    }

    public var title: String
    public var size: PixelSize
    public var fps: Int
    public var background: Background
    public var spacing: LayoutSpacing
    public var widgets: [WidgetSpec]
    public var timeline: Timeline
    /// Where the scene came from, for messages ("demo" for the built-in scene).
    public var source: String
    /// Relative paths in the scene, and in live updates of its widgets, are taken from this folder.
    public var folder = "."
    /// The sound the scene asks for (`audio:`); `run --audio` overrides it.
    public var audio: AudioChoice = .none
    /// More pictures of the scene, each drawn with its own layout (`renditions:`; `--rendition` adds to them).
    public var renditions: [Rendition] = []

    public init(title: String, size: PixelSize, fps: Int, background: Background, spacing: LayoutSpacing,
                widgets: [WidgetSpec], timeline: Timeline, source: String) {
        self.title = title
        self.size = size
        self.fps = fps
        self.background = background
        self.spacing = spacing
        self.widgets = widgets
        self.timeline = timeline
        self.source = source
    }

    /// The widget type names a scene may use.
    public static var widgetTypes: [String] { WidgetTypes.names }
}
