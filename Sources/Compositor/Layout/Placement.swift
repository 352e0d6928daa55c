/// Where a widget goes, relative to the render size: docked to an edge as a band, or filling what is left.
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
