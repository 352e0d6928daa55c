import Foundation

/// A video layer: the newest frame of its input (`VideoInput`, which scales it to this box in GStreamer, the
/// picture's shape kept) painted at each output frame, with rounded corners and an opacity. Without a frame yet,
/// or while the input is lost, it shows its `fallback` image, else the last frame dimmed (or a dark box) with
/// "no signal".
///
/// Its appearance changes exactly when a new input frame arrived (or the signal came or went), so an idle input
/// costs nothing. It counts input frames shown, frames shown again, and frames it never showed.
public final class VideoWidget: WidgetBase, Widget {
    public typealias Config = VideoConfig

    public private(set) var config: Config
    private var fallback: Picture?
    /// Set by the renderer when this layer lies under everything, edge to edge, opaque and square: a plate. Its input
    /// then delivers I420, which the frame producer copies straight into the encoder's buffer; only where widgets lie
    /// over it is it drawn (converted to BGRx) into the canvas.
    public private(set) var isPlate = false
    /// A BGRx copy of the last I420 frame that had to be scaled or blended (not a plate's plain copy).
    private var converted: (sequence: UInt64, surface: ImageSurface)?
    /// Where the input puts its frames; the session attaches an input to it (a snapshot has none).
    public private(set) var slot = VideoFrameSlot()
    /// A rendition's layer shows the main picture's layer's frames (`slot` is that layer's), scaled to its own box:
    /// it neither sets the size the input makes nor counts what is shown (the main layer does both).
    private(set) var isFollower = false
    private var engine: TextEngine?
    private var label: TextLayout?
    private var lastPainted: UInt64 = 0
    /// The input frame and signal of the output frame being drawn, taken once in `appearance`.
    private var current: VideoFrameSlot.Frame?
    private var signal = false

    public init(id: String, style: Style, config: Config, warn: @escaping (String) -> Void = { _ in }) {
        self.config = config
        super.init(id: id, style: style)
        if let path = config.fallback {
            do { fallback = try Picture.load(path: path) } catch {
                warn("widget '\(id)': fallback: \(error); showing 'no signal' instead")
            }
        }
    }

    /// Whether this layer can be a plate: a background, opaque, square, without a panel, padding or border, whose
    /// frames cover it (fit or fill).
    public var canBePlate: Bool {
        config.opacity >= 1 && config.fit != .center && style.cornerRadius == 0 && style.padding == 0
            && (style.background?.alpha ?? 0) == 0 && (style.border?.alpha ?? 0) == 0
    }

    func becomePlate() { isPlate = true }

    /// Shows the frames of `leader` (the same layer in the main picture) from now on; before the first frame.
    func follow(_ leader: VideoWidget) {
        slot = leader.slot
        isFollower = true
    }

    /// Run-time changes (render thread): the source named (the session restarts the input), the opacity.
    public func update(source: VideoSource?, opacity: Double?) {
        if let source { config.source = source }
        if let opacity { config.opacity = opacity }
        version += 1
    }

    public func layout(box: Rect, frame: PixelSize, engine: TextEngine) {
        place(box: box, frame: frame)
        self.engine = engine
        let size = PixelSize(width: max(2, Int(content.width.rounded()) & ~1), height: max(2, Int(content.height.rounded()) & ~1))
        if !isFollower { slot.want(size) }
        let px = max(8, min(content.height / 8, content.width / 12))
        label = TextLayout(engine: engine, text: "no signal", font: style.font, pixelSize: px, width: content.width,
                           alignment: .center)
    }

    public func draw(on canvas: Canvas, at time: FrameTime) {
        drawPanel(on: canvas)
        let radius = style.cornerRadius * scale
        let frame = current ?? slot.frame
        if let frame, frame.i420 {
            drawI420(frame, on: canvas, radius: radius)
            if frame.sequence != lastPainted {
                lastPainted = frame.sequence
                if !isFollower { slot.painted(frame) }
            }
        } else if let frame {
            frame.buffer.withBytes { bytes in
                canvas.paint(bgrx: bytes, size: frame.size, stride: frame.size.width * 4, in: fitted(frame.size),
                             clip: content, radius: radius, opacity: config.opacity)
            }
            if frame.sequence != lastPainted {
                lastPainted = frame.sequence
                if !isFollower { slot.painted(frame) }
            }
        } else {
            canvas.fillRounded(content, radius: radius, Color(red: 0.08, green: 0.08, blue: 0.1))
        }
        if !signal, let fallback {
            canvas.withState {
                canvas.clipRounded(content, radius: radius)
                canvas.paint(content, .black)
                fallback.draw(on: canvas, in: content, fit: .fit)
            }
        } else if !signal {
            canvas.fillRounded(content, radius: radius, Color(red: 0, green: 0, blue: 0, alpha: frame == nil ? 0 : 0.55))
            if let label {
                label.draw(on: canvas, x: content.x, y: content.y + (content.height - label.height) / 2, color: style.secondaryColor)
            }
        }
    }

    /// An I420 frame at its own size, opaque and square, is converted straight into the canvas where the canvas is
    /// being drawn (the clip), no more; otherwise it is converted whole once and painted like a BGRx frame.
    private func drawI420(_ frame: VideoFrameSlot.Frame, on canvas: Canvas, radius: Double) {
        let dest = fitted(frame.size)
        if config.opacity >= 1 && radius == 0 && dest.width == Double(frame.size.width) && dest.height == Double(frame.size.height),
           let area = dest.intersection(content)?.intersection(canvas.clipExtents) {
            let ox = Int(dest.x), oy = Int(dest.y)
            let x0 = max(0, Int(area.minX.rounded(.down)) - ox), y0 = max(0, Int(area.minY.rounded(.down)) - oy)
            let x1 = min(frame.size.width, Int(area.maxX.rounded(.up)) - ox), y1 = min(frame.size.height, Int(area.maxY.rounded(.up)) - oy)
            guard x1 > x0, y1 > y0 else { return }
            let surface = canvas.surface
            guard ox + x0 >= 0, oy + y0 >= 0, ox + x1 <= surface.width, oy + y1 <= surface.height else { return }
            surface.withMutableBytes(dirty: (ox + x0, oy + y0, x1 - x0, y1 - y0)) { bytes in
                _ = frame.buffer.withI420Planes(size: frame.size) { planes in
                    I420Converter.toBGRx(from: planes, into: bytes, stride: surface.stride, rect: (x0, y0, x1, y1), offset: (ox, oy))
                }
            }
            return
        }
        // Scaled (the input has not followed a resize yet), translucent or rounded: convert it whole, once.
        if converted?.sequence != frame.sequence || converted?.surface.width != frame.size.width
            || converted?.surface.height != frame.size.height {
            guard let surface = try? ImageSurface(width: frame.size.width, height: frame.size.height) else { return }
            surface.withMutableBytes(dirty: (0, 0, frame.size.width, frame.size.height)) { bytes in
                _ = frame.buffer.withI420Planes(size: frame.size) { planes in
                    I420Converter.toBGRx(from: planes, into: bytes, stride: surface.stride,
                                         rect: (0, 0, frame.size.width, frame.size.height), offset: (0, 0))
                }
            }
            converted = (frame.sequence, surface)
        }
        if let surface = converted?.surface {
            surface.withBytes { bytes in
                canvas.paint(bgrx: bytes, size: frame.size, stride: surface.stride, in: dest, clip: content, radius: radius,
                             opacity: config.opacity)
            }
        }
    }

    /// The current frame when it is a plate's I420 picture at the picture's size: what the frame producer copies.
    public var plateFrame: VideoFrameSlot.Frame? {
        guard isPlate, signal, config.opacity >= 1, let frame = current, frame.i420, frame.size.width == Int(box.width),
              frame.size.height == Int(box.height), box.x == 0, box.y == 0 else { return nil }
        return frame
    }

    /// A whole frame at full opacity with square corners covers what is under it: nothing below needs drawing.
    public func paintsOpaquely(_ region: Rect, at time: FrameTime) -> Bool {
        guard config.opacity >= 1, style.cornerRadius == 0, let frame = current ?? slot.frame else { return false }
        return fitted(frame.size).intersection(content).map { $0.contains(region, tolerance: 0) } ?? false
    }

    /// The frame's rectangle in the content. The input scales to the content's size (rounded down to even), so a
    /// frame is normally painted at its own size, centered on whole pixels (a copy, not a resampling); so is every
    /// frame of a `center` layer. A frame of another size (before the input followed a resize) is scaled to fit or
    /// to cover the content, as the layer's `fit` says.
    func fitted(_ size: PixelSize) -> Rect {
        let w = Double(size.width), h = Double(size.height)
        let near = abs(content.width - w) < 2.5 && abs(content.height - h) < 2.5
        if config.fit == .center || near {
            return Rect(x: (content.x + (content.width - w) / 2).rounded(), y: (content.y + (content.height - h) / 2).rounded(),
                        width: w, height: h)
        }
        let kx = content.width / w, ky = content.height / h
        let k = config.fit == .fill ? max(kx, ky) : min(kx, ky)
        return Rect(x: content.x + (content.width - w * k) / 2, y: content.y + (content.height - h * k) / 2,
                    width: w * k, height: h * k)
    }

    /// Called once per output frame by the renderer: counts the input frame this output frame shows.
    public func appearance(at time: FrameTime) -> Appearance {
        current = isFollower ? slot.frame : slot.showing()
        signal = slot.hasSignal
        return Appearance(Int64(version), Int64(current?.sequence ?? 0), signal ? 1 : 0)
    }
}

extension VideoWidget {
    /// A live update, checked by `VideoConfig.change`, on the render thread.
    public func apply(_ change: any WidgetChange, at media: Double) {
        if let c = change as? VideoConfig.Change { update(source: c.source, opacity: c.opacity) }
    }
}

extension VideoConfig: WidgetMaking {
    public func make(id: String, style: Style, warn: @escaping (String) -> Void) -> any Widget {
        VideoWidget(id: id, style: style, config: self, warn: warn)
    }
}

extension VideoWidget: InputWidget {
    /// One input per layer, each failing and retrying alone.
    static func liveInputs(for widgets: [VideoWidget], context: InputContext) -> [any SessionInput] {
        let template: PipelineTemplate
        do { template = try PipelineTemplate.load("video-input") } catch {
            context.warn("video layers show no signal: \(error)")
            return []
        }
        return widgets.map { w in
            VideoInput(id: w.id, source: w.config.source, loops: w.config.loop, fit: w.config.fit, i420: w.isPlate,
                       slot: w.slot, template: template, onEvent: context.onEvent)
        }
    }

    /// Each layer shows its source's picture at this scene time (files) or its first picture (live).
    static func still(for widgets: [VideoWidget], at: Double, context: InputContext) throws -> (any SessionInput)? {
        for layer in widgets {
            do { try VideoStill.grab(into: layer, at: at) } catch {
                context.warn("video '\(layer.id)': no picture (\(error)); drawing its placeholder")
            }
        }
        return nil
    }

    func follow(leaderIn main: Renderer) {
        if let leader = main.widget(id: id) as? VideoWidget { follow(leader) }
    }
}
