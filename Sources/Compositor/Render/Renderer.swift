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
    /// The Pango context texts are laid out in. Its font map keeps the fontsets, fonts and fontconfig patterns of
    /// every size it was asked for (the demo: about 0.6 MiB of glibc's heaps a size), so it serves at most
    /// `sizesPerEngine` sizes: a picture dragged through many sizes starts a fresh one then, and the old one goes with
    /// the layouts made in it. A picture that goes back and forth between a few sizes keeps one: a font map of each
    /// size's own, the last two kept, held about 3 MiB more over the hour with everything on, and a fresh font map
    /// costs that resize 15–30 ms more (docs/BENCHMARKS-LOG.md, twenty-eighth session).
    private(set) var engine = TextEngine()
    /// The sizes laid out in `engine` so far.
    private var sizesInEngine: Set<PixelSize> = []
    static let sizesPerEngine = 8
    private var backgroundPicture: Picture?
    /// A gradient or image background drawn once per size: putting it back under a widget is then a copy,
    /// not a gradient computed again for every pixel of every frame (a third of the ticker's cost).
    private var backgroundCache: ImageSurface?
    /// The appearance of each widget (by index) on the canvas, as last drawn; nil before the first frame and after
    /// a layout, when the next frame is drawn whole.
    private var shown: [Appearance]?
    /// Each widget's box, by index (nil: hidden at this size).
    private var boxes: [Rect?] = []
    /// Each box as the one part to redraw of a widget that cannot tell which part changed (made once per layout: a
    /// literal would be an array built every frame).
    private var wholeBoxes: [[Rect]] = []
    /// Widget indices in drawing order: by z, then in scene order.
    private let order: [Int]
    /// For each widget (by index), the visible widgets whose boxes overlap its box, in drawing order; empty for
    /// every docked widget of a scene without floating ones.
    private var overlapping: [[Int]] = []
    /// The plate's index (see `init`), if the scene has one.
    private var plateIndex: Int?
    /// True when the last `render` showed a new plate frame without drawing it into the canvas except under the
    /// widgets: the producer copies `platePicture` and converts only `plateCovered` from the canvas.
    public private(set) var plateRefreshed = false
    /// The boxes of the widgets over the plate, where the canvas holds the picture.
    public private(set) var plateCovered: [Rect] = []
    /// The appearances `isUnchanged` computed, used by the `render` that follows for the same moment (they build
    /// strings and arrays: computing them twice a frame was measurable at 30 frames a second).
    private var looks: (time: FrameTime, values: [Appearance])?
    /// Regions the last `render` left to be written straight into the frame's I420 (DirectRegion) instead of drawing
    /// them: the canvas does not hold their pixels until they are materialized.
    public private(set) var direct: [DirectRegion] = []
    /// Off, every region is drawn into the canvas: the reference the direct path is compared with.
    public var writesStripsDirectly = true

    /// - Parameter warn: receives problems that do not stop rendering (missing image or font).
    public init(scene: Scene, size: PixelSize? = nil, warn: @escaping (String) -> Void = { _ in }) {
        self.scene = scene
        self.size = size ?? scene.size
        sizesInEngine = [self.size]
        widgets = scene.widgets.map { WidgetFactory.make($0, warn: warn) }
        order = scene.widgets.indices.sorted { a, b in
            (scene.widgets[a].z, a) < (scene.widgets[b].z, b)
        }
        // A video layer under everything, edge to edge and opaque, is a plate: its I420 frames go to the encoder's
        // buffer as they are, and only where widgets lie over it is it drawn into the canvas.
        if let bottom = order.first, scene.widgets[bottom].placement.float == .background,
           let layer = widgets[bottom] as? VideoWidget, layer.canBePlate {
            layer.becomePlate()
            plateIndex = bottom
        }
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
        if !sizesInEngine.contains(newSize) {
            if sizesInEngine.count >= Self.sizesPerEngine {
                engine = TextEngine()
                sizesInEngine = []
            }
            sizesInEngine.insert(newSize)
        }
        relayout()
    }

    private func relayout() {
        layout = scene.dock(at: size)
        boxes = widgets.map { layout.boxes[$0.id] }
        wholeBoxes = boxes.map { $0.map { [$0] } ?? [] }
        for w in widgets {
            if let box = layout.boxes[w.id] { w.layout(box: box, frame: size, engine: engine) }
        }
        // Who overlaps whom: docked boxes never do, so a scene without floating widgets keeps the simple path.
        overlapping = boxes.indices.map { i in
            guard let a = boxes[i] else { return [] }
            return order.filter { j in j != i && boxes[j].map { $0.intersection(a) != nil } == true }
        }
        for (i, w) in widgets.enumerated() {
            let position = order.firstIndex(of: i) ?? 0
            w.hasLayerBelow = overlapping[i].contains { order.firstIndex(of: $0) ?? 0 < position }
        }
        // On even pixel edges: these boxes are converted to I420 as they are (2x2 chroma blocks), and every pixel in
        // them must have been drawn.
        plateCovered = plateIndex.map { p in
            order.filter { $0 != p }.compactMap { i -> Rect? in
                guard let b = boxes[i], let a = I420Converter.aligned(b, width: size.width, height: size.height) else { return nil }
                return Rect(x: Double(a.x0), y: Double(a.y0), width: Double(a.x1 - a.x0), height: Double(a.y1 - a.y0))
            }
        } ?? []
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
    /// whose appearance changed are redrawn, each over its own patch of background (and, where floating widgets
    /// overlap it, with the widgets below and above it in that patch, in z order). Returns the regions redrawn
    /// (empty when nothing changed).
    @discardableResult
    public func render(on canvas: Canvas, at time: FrameTime) -> [Rect] {
        var damage: [Rect] = []
        plateRefreshed = false
        let previous = shown
        let now = looks.flatMap { $0.time == time ? $0.values : nil } ?? appearances(at: time)
        looks = nil
        guard let previous else {
            direct = []
            drawBackground(on: canvas, in: size.rect)
            for i in order {
                guard let box = boxes[i] else { continue }
                canvas.withState {
                    canvas.clip(to: box.integral)
                    widgets[i].draw(on: canvas, at: time)
                }
            }
            shown = now
            canvas.surface.flush()
            return [size.rect]
        }
        var redrawn: [Rect] = []
        // A new plate frame: the widgets' boxes over it are drawn again (plate region, then the widgets); the rest of
        // the picture is the plate's own I420, which the producer copies.
        if let p = plateIndex, previous[p] != now[p], platePicture != nil {
            for box in plateCovered {
                redrawStack(in: box, around: p, on: canvas, at: time)
                damage.append(box)
            }
            redrawn = plateCovered
            plateRefreshed = true
        }
        var changed: [(index: Int, region: Rect)] = []
        for i in order {
            guard let box = boxes[i], previous[i] != now[i] else { continue }
            if plateRefreshed && (i == plateIndex || redrawn.contains(where: { $0.contains(box, tolerance: 0.5) })) { continue }
            // Only the parts that changed, when the widget can tell (clipped drawing skips the rest).
            for region in widgets[i].changedRegions(from: previous[i], to: now[i]) ?? wholeBoxes[i] {
                changed.append((i, region.integral))
            }
        }
        // A widget alone in its region that shows only opaque strips there is written into the I420 frame as it is
        // (no plate: its frames replace the whole buffer).
        var fresh: [DirectRegion] = []
        if writesStripsDirectly && plateIndex == nil {
            for (i, region) in changed where overlapping[i].isEmpty {
                if let pieces = widgets[i].directPieces(for: region, at: time),
                   let d = DirectRegion(widget: i, region: region, pieces: pieces, picture: size) {
                    fresh.append(d)
                }
            }
        }
        // What the last frame left out of the canvas and this one does not write again is drawn now, before
        // anything is drawn over or beside it.
        for old in direct where !fresh.contains(where: { $0.widget == old.widget && $0.region == old.region }) {
            old.materialize(on: canvas)
        }
        direct = fresh
        for (i, region) in changed {
            damage.append(region)
            if fresh.contains(where: { $0.widget == i && $0.region == region }) { continue }
            let w = widgets[i]
            if overlapping[i].isEmpty {
                canvas.withState {
                    canvas.clip(to: region)
                    if !w.paintsOpaquely(region, at: time) { drawBackground(on: canvas, in: region) }
                    w.draw(on: canvas, at: time)
                }
            } else {
                redrawStack(in: region, around: i, on: canvas, at: time)
            }
        }
        shown = now
        canvas.surface.flush()
        return damage
    }

    /// Draws what the last frame wrote straight into I420 into `canvas` too: before the canvas is read as a picture.
    public func materializeDirect(on canvas: Canvas) {
        for d in direct { d.materialize(on: canvas) }
        direct = []
        canvas.surface.flush()
    }

    /// The plate's current frame, when there is a plate and it shows an I420 picture at the picture's size.
    public var platePicture: VideoFrameSlot.Frame? {
        plateIndex.flatMap { (widgets[$0] as? VideoWidget)?.plateFrame }
    }

    /// Draws `region` again from the bottom up: the background, unless a widget covers the region opaquely, then
    /// every widget whose box meets it, in z order, each clipped to the region and its own box.
    private func redrawStack(in region: Rect, around index: Int, on canvas: Canvas, at time: FrameTime) {
        // Two passes over the drawing order, no arrays built: a plate redraws these regions every frame.
        func inStack(_ i: Int) -> Bool {
            (i == index || overlapping[index].contains(i)) && boxes[i].map { $0.intersection(region) != nil } == true
        }
        var base: Int?
        for (n, i) in order.enumerated() where inStack(i) && widgets[i].paintsOpaquely(region, at: time) { base = n }
        if base == nil { drawBackground(on: canvas, in: region) }
        for i in order[(base ?? 0)...] where inStack(i) {
            guard let clip = boxes[i]?.integral.intersection(region) else { continue }
            canvas.withState {
                canvas.clip(to: clip)
                widgets[i].draw(on: canvas, at: time)
            }
        }
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
        snapshot(at: time, into: surface)
        return surface
    }

    /// Renders one whole frame into `surface` (of this renderer's size), every pixel drawn again (the background
    /// covers the picture): the same picture as `snapshot(at:)`, without a new surface's memory to map and fault in
    /// for each frame (a probe comparing every frame with the scene).
    public func snapshot(at time: FrameTime, into surface: ImageSurface) {
        precondition(surface.width == size.width && surface.height == size.height, "surface must be the renderer's size")
        invalidate()
        render(on: Canvas(surface: surface), at: time)
    }
}
