/// Where a widget goes, relative to the render size: docked to an edge as a band, filling what is left, or
/// floating: the whole picture behind the docked widgets (`background`), or an inset over them.
///
/// Bands are taken from the remaining area in scene order (like a dock panel), so boxes never overlap and
/// never leave the picture. A band's thickness is a fraction of the picture's height (top/bottom) or width
/// (left/right), clamped to `min`/`max` pixels at 720 scale. When the picture is too small for every band,
/// the lowest `priority` widget is hidden first and the layout is tried again.
public struct Placement: Equatable, Sendable {
    public enum Edge: String, Sendable, CaseIterable {
        case top, bottom, left, right, fill
    }

    public var edge: Edge
    /// Fraction of the picture's height (top/bottom) or width (left/right); ignored for fill.
    public var size: Double
    /// Smallest readable thickness in pixels (absolute, not scaled): below it the widget is hidden.
    public var minPixels: Double
    /// Largest thickness in pixels at 720 scale; nil for no cap.
    public var maxPixels: Double?
    /// Overrides for portrait pictures (height > width).
    public var portraitEdge: Edge?
    public var portraitSize: Double?
    /// Higher stays longer when space runs out.
    public var priority: Int
    /// Takes the whole edge of the picture, outside the scene padding (the timecode strip).
    public var bleed: Bool
    /// Set for a widget that does not dock: it takes no room from the others and is drawn in its `z` order.
    public var float: Float?
    /// An inset's own place in portrait pictures (the landscape one otherwise).
    public var portraitInset: Inset?

    public init(edge: Edge, size: Double = 0.15, minPixels: Double = 12, maxPixels: Double? = nil,
                portraitEdge: Edge? = nil, portraitSize: Double? = nil, priority: Int = 0, bleed: Bool = false) {
        self.edge = edge
        self.size = size
        self.minPixels = minPixels
        self.maxPixels = maxPixels
        self.portraitEdge = portraitEdge
        self.portraitSize = portraitSize
        self.priority = priority
        self.bleed = bleed
    }

    func resolved(portrait: Bool) -> (edge: Edge, size: Double) {
        portrait ? (portraitEdge ?? edge, portraitSize ?? size) : (edge, size)
    }

    /// A widget drawn over or under the docked ones instead of taking a band.
    public enum Float: Equatable, Sendable {
        /// The whole picture, edge to edge (a video or image behind everything).
        case background
        case inset(Inset)
    }

    /// A box floating over the picture: anchored to a corner, an edge's middle or the centre of the area inside
    /// the scene padding (and inside bleeding bands such as the timecode strip), `margin` away from it.
    public struct Inset: Equatable, Sendable {
        public enum Anchor: String, Sendable, CaseIterable {
            case topLeft = "top-left", top, topRight = "top-right", left, center, right
            case bottomLeft = "bottom-left", bottom, bottomRight = "bottom-right"
        }

        public var anchor: Anchor
        /// Fraction of the picture's width (of its height, for a portrait picture's own inset).
        public var width: Double
        /// Width over height; the box shrinks, keeping it, when the area is not tall enough.
        public var aspect: Double
        /// Distance from the anchored edges as a fraction of the picture's short side, beyond the scene padding.
        public var margin: Double

        public init(anchor: Anchor, width: Double = 0.3, aspect: Double = 16.0 / 9.0, margin: Double = 0) {
            self.anchor = anchor
            self.width = width
            self.aspect = aspect
            self.margin = margin
        }

        /// The inset's box in `area` (the padded picture) of a picture of `size`.
        func box(in area: Rect, size: PixelSize) -> Rect {
            let m = (margin * Double(size.shortSide)).rounded()
            let room = area.inset(m)
            var w = (width * Double(size.width)).rounded()
            var h = (w / aspect).rounded()
            if w > room.width { w = room.width; h = (w / aspect).rounded() }
            if h > room.height { h = room.height; w = (h * aspect).rounded() }
            let (ax, ay): (Double, Double) = switch anchor {
            case .topLeft: (0, 0)
            case .top: (0.5, 0)
            case .topRight: (1, 0)
            case .left: (0, 0.5)
            case .center: (0.5, 0.5)
            case .right: (1, 0.5)
            case .bottomLeft: (0, 1)
            case .bottom: (0.5, 1)
            case .bottomRight: (1, 1)
            }
            return Rect(x: (room.x + (room.width - w) * ax).rounded(), y: (room.y + (room.height - h) * ay).rounded(),
                        width: max(0, w), height: max(0, h))
        }
    }
}

/// Scene-wide spacing, as fractions of the picture's short side.
public struct LayoutSpacing: Equatable, Sendable {
    public var padding: Double = 0.02
    public var gap: Double = 0.015
    public init(padding: Double = 0.02, gap: Double = 0.015) {
        self.padding = padding
        self.gap = gap
    }
}
