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
    /// What each target (a canvas, or a pooled buffer's memory) shows: widget id → appearance drawn there.
    /// A target with no entry gets a full redraw.
    private var shown: [Int: [String: AnyHashable]] = [:]
    /// The appearance of every widget in the last frame rendered, on any target.
    private var lastFrame: [String: AnyHashable]?
    /// The key of the default target, for callers that draw onto one canvas again and again.
    public static let defaultTarget = 0

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
        for w in widgets {
            if let box = layout.boxes[w.id] { w.layout(box: box, frame: size, engine: engine) }
        }
        invalidate()
    }

    /// Forgets what every target shows: the next frame on each is drawn whole.
    public func invalidate() {
        shown = [:]
        lastFrame = nil
    }

    /// True when the frame at `time` would look exactly like the last frame rendered, so the caller can send
    /// that frame again instead of drawing.
    public func isUnchanged(at time: FrameTime) -> Bool {
        guard let lastFrame else { return false }
        for w in widgets where layout.boxes[w.id] != nil {
            if lastFrame[w.id] != w.appearance(at: time) { return false }
        }
        return true
    }

    /// Draws the frame at `time` onto `canvas`. `target` names the memory behind the canvas (a pooled
    /// buffer): only widgets whose appearance differs from what that memory last showed are redrawn, each
    /// over its own patch of background. Returns the regions redrawn (empty when nothing changed).
    @discardableResult
    public func render(on canvas: Canvas, at time: FrameTime, target: Int = Renderer.defaultTarget) -> [Rect] {
        var damage: [Rect] = []
        let previous = shown[target]
        let full = previous == nil
        if full {
            drawBackground(on: canvas, in: size.rect)
            damage.append(size.rect)
        }
        var now: [String: AnyHashable] = [:]
        for w in widgets {
            guard let box = layout.boxes[w.id] else { continue }
            let look = w.appearance(at: time)
            now[w.id] = look
            if !full && previous?[w.id] == look { continue }
            // Only the part that changed, when the widget can tell (clipped drawing skips the rest).
            var region = box.integral
            if !full, let old = previous?[w.id], let part = w.changedRegion(from: old, to: look) {
                region = part.integral
            }
            canvas.withState {
                canvas.clip(to: region)
                if !full { drawBackground(on: canvas, in: region) }
                w.draw(on: canvas, at: time)
            }
            if !full { damage.append(region) }
        }
        // Pools recycle a handful of buffers; a stale key (a freed buffer) costs only a full redraw.
        if shown[target] == nil && shown.count >= 32 { shown = [:] }
        shown[target] = now
        lastFrame = now
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
