import Foundation

/// One piece of content in the picture: a clock, a ticker, a now-playing card, an image, a label, a timecode.
///
/// The renderer calls `layout` whenever the render size changes (the render-size callback, like a PiP
/// window's `didTransitionToRenderSize`), then `draw` for every frame whose `appearance` differs from the
/// one last drawn: a widget that did not change is not redrawn.
public protocol Widget: AnyObject {
    var id: String { get }
    /// The box the last layout gave, in pixels.
    var box: Rect { get }
    /// The render-size callback: the widget's new box inside a picture of `frame` size.
    func layout(box: Rect, frame: PixelSize, engine: TextEngine)
    /// Draws the widget as it looks at `time`, inside `box` only.
    func draw(on canvas: Canvas, at time: FrameTime)
    /// A value that changes exactly when the widget's pixels change.
    func appearance(at time: FrameTime) -> Appearance
    /// Where text sits after the last layout, in pixels: each laid-out run's logical box.
    var textBoxes: [Rect] { get }
    /// The parts of the box that differ between two appearances, each redrawn on its own; nil means the whole box.
    func changedRegions(from old: Appearance, to new: Appearance) -> [Rect]?
    /// True when drawing the frame at `time` covers every pixel of `region` with opaque pixels of its own, so
    /// the background need not be put back there first.
    func paintsOpaquely(_ region: Rect, at time: FrameTime) -> Bool
    /// Set by the layout when another widget is drawn beneath this one (a floating layer): what lies under it is
    /// then not the scene's background, and may change without this widget changing.
    var hasLayerBelow: Bool { get set }
    /// The opaque strips that are all `region` shows at `time`, drawn in this order (a scrolling ticker over a
    /// plain band); nil when the region is anything else. The renderer may then write them into the frame's I420
    /// without drawing them (DirectRegion).
    func directPieces(for region: Rect, at time: FrameTime) -> [DirectPiece]?
    /// A live update of its properties (`PATCH /v1/widgets/ID`), checked by its configuration's schema; applied on
    /// the render thread at scene time `media`.
    func apply(_ change: any WidgetChange, at media: Double)
}

extension Widget {
    public func changedRegions(from old: Appearance, to new: Appearance) -> [Rect]? { nil }
    public func paintsOpaquely(_ region: Rect, at time: FrameTime) -> Bool { false }
    public func directPieces(for region: Rect, at time: FrameTime) -> [DirectPiece]? { nil }
    public func apply(_ change: any WidgetChange, at media: Double) {}
}

/// How a widget type's configuration becomes the widget that draws it: each widget's file conforms its
/// configuration (the schema, in CompositorCore) to this.
public protocol WidgetMaking: WidgetConfig {
    func make(id: String, style: Style, warn: @escaping (String) -> Void) -> any Widget
}

/// What all widgets share: the id, the style, the box, the panel behind the content and the padding.
open class WidgetBase {
    public let id: String
    public let style: Style
    public private(set) var box: Rect = .zero
    /// `box` less the padding: where content goes.
    public private(set) var content: Rect = .zero
    /// Scale of the picture against a 720-pixel short side: padding, radii and speeds scale with it.
    public private(set) var scale: Double = 1
    public var textBoxes: [Rect] = []
    /// Bumped by every update that changes the look without a new layout.
    public var version = 0
    public var hasLayerBelow = false

    public init(id: String, style: Style) {
        self.id = id
        self.style = style
    }

    /// Sets box, scale and content; subclasses call it first in their `layout`.
    public func place(box: Rect, frame: PixelSize) {
        self.box = box
        scale = Double(frame.shortSide) / 720
        content = Self.content(of: box, frame: frame, padding: style.padding)
        textBoxes = []
    }

    /// `box` less `padding` (pixels at a 720-pixel short side, scaled to `frame`; at most a quarter of the box).
    public static func content(of box: Rect, frame: PixelSize, padding: Double) -> Rect {
        box.inset(min(padding * (Double(frame.shortSide) / 720), min(box.width, box.height) / 4))
    }

    /// The panel (background colour, rounded corners, border) behind the content.
    public func drawPanel(on canvas: Canvas) {
        let radius = style.cornerRadius * scale
        if let bg = style.background, bg.alpha > 0 {
            canvas.fillRounded(box, radius: radius, bg)
        }
        if let border = style.border, border.alpha > 0 {
            canvas.strokeRounded(box, radius: radius, width: max(1, 2 * scale), border)
        }
    }

    /// Records where a layout will be drawn, so tests can check it stays in the box.
    public func record(_ layout: TextLayout, x: Double, y: Double) {
        let r = layout.logicalRect
        textBoxes.append(Rect(x: x + r.x, y: y + r.y, width: r.width, height: r.height))
    }
}
