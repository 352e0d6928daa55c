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
    private var drawn: [String: AnyHashable] = [:]
    private var needsFull = true

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

    /// Forces the next frame to be drawn whole (after the target memory changed hands).
    public func invalidate() {
        needsFull = true
        drawn = [:]
    }

    /// Draws the frame at `time` onto `canvas`, which must hold the previous frame unless `invalidate` was
    /// called. Returns the regions that changed (empty when the frame is identical to the previous one).
    @discardableResult
    public func render(on canvas: Canvas, at time: FrameTime) -> [Rect] {
        var damage: [Rect] = []
        let full = needsFull
        if full {
            drawBackground(on: canvas, in: size.rect)
            damage.append(size.rect)
            needsFull = false
        }
        for w in widgets {
            guard let box = layout.boxes[w.id] else { continue }
            let look = w.appearance(at: time)
            if !full && drawn[w.id] == look { continue }
            drawn[w.id] = look
            canvas.withState {
                canvas.clip(to: box.integral)
                if !full { drawBackground(on: canvas, in: box.integral) }
                w.draw(on: canvas, at: time)
            }
            if !full { damage.append(box.integral) }
        }
        canvas.surface.flush()
        return damage
    }

    private func drawBackground(on canvas: Canvas, in rect: Rect) {
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
