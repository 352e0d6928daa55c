import Foundation

/// Draws a scene into frames: lays the widgets out for the render size, then for each frame redraws only
/// the widgets whose appearance changed (each over its own patch of background).
///
/// Used on one thread (the render loop, or a snapshot).
public final class Renderer {
    public let scene: Scene
    public private(set) var size: PixelSize
    public let widgets: [any Widget]
    public private(set) var layout: DockLayout.Result
    private let engine = TextEngine()
    private var backgroundPicture: Picture?
    /// A gradient or image background drawn once per size: putting it back under a widget is then a copy,
    /// not a gradient computed again for every pixel of every frame (a third of the ticker's cost).
    private var backgroundCache: ImageSurface?
    /// The appearance of each widget (by index) on the canvas, as last drawn; nil before the first frame and after
    /// a layout, when the next frame is drawn whole.
    private var shown: [Appearance]?
    /// Each widget's box, by index (nil: hidden at this size).
    private var boxes: [Rect?] = []
    /// The appearances `isUnchanged` computed, used by the `render` that follows for the same moment (they build
    /// strings and arrays: computing them twice a frame was measurable at 30 frames a second).
    private var looks: (time: FrameTime, values: [Appearance])?

    /// - Parameter warn: receives problems that do not stop rendering (missing image or font).
    public init(scene: Scene, size: PixelSize? = nil, warn: @escaping (String) -> Void = { _ in }) {
        self.scene = scene
        self.size = size ?? scene.size
        widgets = scene.widgets.map { WidgetFactory.make($0, warn: warn) }
        if case .image(let path, _, _) = scene.background {
            do { backgroundPicture = try Picture.load(path: path) } catch {
                warn("background: \(error); using the background colour")
            }
        }
        layout = DockLayout.Result(boxes: [:], hidden: [])
        relayout()
    }

    public func widget(id: String) -> (any Widget)? { widgets.first { $0.id == id } }

    /// The render-size callback: every widget re-lays for the new size and the next frame is drawn whole.
    public func resize(to newSize: PixelSize) {
        size = newSize
        backgroundCache = nil
        relayout()
    }

    private func relayout() {
        let items = zip(scene.widgets, widgets).map { DockLayout.Item(id: $1.id, placement: $0.placement) }
        layout = DockLayout.solve(items, size: size, spacing: scene.spacing)
        boxes = widgets.map { layout.boxes[$0.id] }
        for w in widgets {
            if let box = layout.boxes[w.id] { w.layout(box: box, frame: size, engine: engine) }
        }
        invalidate()
    }

    /// Forgets what the canvas shows: the next frame is drawn whole.
    public func invalidate() {
        shown = nil
        looks = nil
    }

    private func appearances(at time: FrameTime) -> [Appearance] {
        widgets.indices.map { i in boxes[i] == nil ? .hidden : widgets[i].appearance(at: time) }
    }

    /// True when the frame at `time` would look exactly like the last frame rendered, so the caller can send
    /// that frame again instead of drawing.
    public func isUnchanged(at time: FrameTime) -> Bool {
        guard let shown else { return false }
        let now = appearances(at: time)
        looks = (time, now)
        return now == shown
    }

    /// Draws the frame at `time` onto `canvas`, which must be the canvas of the previous frames: only widgets
    /// whose appearance changed are redrawn, each over its own patch of background. Returns the regions redrawn
    /// (empty when nothing changed).
    @discardableResult
    public func render(on canvas: Canvas, at time: FrameTime) -> [Rect] {
        var damage: [Rect] = []
        let previous = shown
        let now = looks.flatMap { $0.time == time ? $0.values : nil } ?? appearances(at: time)
        looks = nil
        if previous == nil {
            drawBackground(on: canvas, in: size.rect)
            damage.append(size.rect)
        }
        for (i, w) in widgets.enumerated() {
            guard let box = boxes[i] else { continue }
            let look = now[i]
            if let previous, previous[i] == look { continue }
            // Only the part that changed, when the widget can tell (clipped drawing skips the rest).
            var region = box.integral
            if let old = previous?[i], let part = w.changedRegion(from: old, to: look) {
                region = part.integral
            }
            canvas.withState {
                canvas.clip(to: region)
                if previous != nil && !w.paintsOpaquely(region, at: time) { drawBackground(on: canvas, in: region) }
                w.draw(on: canvas, at: time)
            }
            if previous != nil { damage.append(region) }
        }
        shown = now
        canvas.surface.flush()
        return damage
    }

    private func drawBackground(on canvas: Canvas, in rect: Rect) {
        if case .color(let c) = scene.background {
            canvas.paint(rect, c.withAlpha(1))
            return
        }
        if backgroundCache == nil, let cache = try? ImageSurface(width: size.width, height: size.height) {
            paintBackground(on: Canvas(surface: cache), in: size.rect)
            cache.flush()
            backgroundCache = cache
        }
        if let backgroundCache {
            canvas.copy(rect, from: backgroundCache)
        } else {
            paintBackground(on: canvas, in: rect)
        }
    }

    private func paintBackground(on canvas: Canvas, in rect: Rect) {
        let whole = size.rect
        canvas.withState {
            canvas.clip(to: rect)
            switch scene.background {
            case .color(let c):
                canvas.paint(rect, c.withAlpha(1))
            case .gradient(let stops, let angle):
                canvas.paint(rect, .black)
                canvas.fillGradient(whole, stops: stops, angle: angle)
            case .image(_, let fit, let fallback):
                canvas.paint(rect, fallback.withAlpha(1))
                backgroundPicture?.draw(on: canvas, in: whole, fit: fit)
            }
        }
    }

    /// Renders one whole frame into a new surface: what `snapshot` does.
    public func snapshot(at time: FrameTime) throws -> ImageSurface {
        let surface = try ImageSurface(width: size.width, height: size.height)
        let canvas = Canvas(surface: surface)
        invalidate()
        render(on: canvas, at: time)
        return surface
    }
}
