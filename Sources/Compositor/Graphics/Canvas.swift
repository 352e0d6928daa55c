import CPango
import Foundation

/// Owns one `cairo_t` drawing onto an `ImageSurface`; the few drawing verbs widgets need.
public final class Canvas {
    public let pointer: OpaquePointer
    /// Kept so the surface outlives the context that draws on it.
    public let surface: ImageSurface

    public init(surface: ImageSurface) {
        self.surface = surface
        pointer = cairo_create(surface.pointer)!
    }

    deinit {
        cairo_destroy(pointer)
    }

    /// Runs `body` between cairo_save and cairo_restore, so clips and transforms do not leak.
    public func withState<T>(_ body: () throws -> T) rethrows -> T {
        cairo_save(pointer)
        defer { cairo_restore(pointer) }
        return try body()
    }

    public func clip(to rect: Rect) {
        cairo_rectangle(pointer, rect.x, rect.y, rect.width, rect.height)
        cairo_clip(pointer)
    }

    public func clipRounded(_ rect: Rect, radius: Double) {
        roundedRectPath(rect, radius: radius)
        cairo_clip(pointer)
    }

    public func setColor(_ c: Color) {
        cairo_set_source_rgba(pointer, c.red, c.green, c.blue, c.alpha)
    }

    public func fill(_ rect: Rect, _ color: Color) {
        setColor(color)
        cairo_rectangle(pointer, rect.x, rect.y, rect.width, rect.height)
        cairo_fill(pointer)
    }

    /// Fills ignoring what is below (no blending): how a damaged region is reset before redrawing.
    public func paint(_ rect: Rect, _ color: Color) {
        withState {
            cairo_set_operator(pointer, CAIRO_OPERATOR_SOURCE)
            fill(rect, color)
        }
    }

    public func roundedRectPath(_ r: Rect, radius: Double) {
        let rad = max(0, min(radius, min(r.width, r.height) / 2))
        guard rad > 0 else {
            cairo_rectangle(pointer, r.x, r.y, r.width, r.height)
            return
        }
        cairo_new_sub_path(pointer)
        cairo_arc(pointer, r.maxX - rad, r.minY + rad, rad, -Double.pi / 2, 0)
        cairo_arc(pointer, r.maxX - rad, r.maxY - rad, rad, 0, Double.pi / 2)
        cairo_arc(pointer, r.minX + rad, r.maxY - rad, rad, Double.pi / 2, Double.pi)
        cairo_arc(pointer, r.minX + rad, r.minY + rad, rad, Double.pi, 3 * Double.pi / 2)
        cairo_close_path(pointer)
    }

    public func fillRounded(_ rect: Rect, radius: Double, _ color: Color) {
        setColor(color)
        roundedRectPath(rect, radius: radius)
        cairo_fill(pointer)
    }

    public func strokeRounded(_ rect: Rect, radius: Double, width: Double, _ color: Color) {
        setColor(color)
        cairo_set_line_width(pointer, width)
        roundedRectPath(rect.inset(width / 2), radius: radius)
        cairo_stroke(pointer)
    }

    /// Fills `rect` with a linear gradient at `angle` degrees (0 = left to right, 90 = top to bottom).
    public func fillGradient(_ rect: Rect, stops: [Color], angle: Double) {
        let a = angle * Double.pi / 180
        let cx = rect.x + rect.width / 2, cy = rect.y + rect.height / 2
        let half = (abs(cos(a)) * rect.width + abs(sin(a)) * rect.height) / 2
        let pattern = cairo_pattern_create_linear(cx - cos(a) * half, cy - sin(a) * half,
                                                  cx + cos(a) * half, cy + sin(a) * half)!
        defer { cairo_pattern_destroy(pattern) }
        for (i, c) in stops.enumerated() {
            let offset = stops.count == 1 ? 0 : Double(i) / Double(stops.count - 1)
            cairo_pattern_add_color_stop_rgba(pattern, offset, c.red, c.green, c.blue, c.alpha)
        }
        cairo_set_source(pointer, pattern)
        cairo_rectangle(pointer, rect.x, rect.y, rect.width, rect.height)
        cairo_fill(pointer)
    }

    /// A filled polygon, for glyph-free icons (play, pause) that render the same with any font.
    public func fillPolygon(_ points: [(Double, Double)], _ color: Color) {
        guard let first = points.first else { return }
        setColor(color)
        cairo_move_to(pointer, first.0, first.1)
        for p in points.dropFirst() { cairo_line_to(pointer, p.0, p.1) }
        cairo_close_path(pointer)
        cairo_fill(pointer)
    }

    /// A box with a cross: what a widget shows where an image could not be loaded.
    public func placeholder(_ rect: Rect, _ color: Color) {
        let w = max(1, min(rect.width, rect.height) / 40)
        withState {
            clip(to: rect)
            setColor(color)
            cairo_set_line_width(pointer, w)
            cairo_rectangle(pointer, rect.x + w / 2, rect.y + w / 2, rect.width - w, rect.height - w)
            cairo_move_to(pointer, rect.minX, rect.minY)
            cairo_line_to(pointer, rect.maxX, rect.maxY)
            cairo_move_to(pointer, rect.maxX, rect.minY)
            cairo_line_to(pointer, rect.minX, rect.maxY)
            cairo_stroke(pointer)
        }
    }

    /// Copies `rect` of `image` (same size as this canvas) to the same place, replacing what is there: a
    /// plain pixel copy, how a cached background is put back under a widget that moved.
    public func copy(_ rect: Rect, from image: ImageSurface) {
        copy(image, at: (0, 0), in: rect)
    }

    /// Copies `image`, its top-left at whole pixel `origin`, into `rect`, replacing what is there.
    public func copy(_ image: ImageSurface, at origin: (x: Int, y: Int), in rect: Rect) {
        withState {
            cairo_set_operator(pointer, CAIRO_OPERATOR_SOURCE)
            cairo_set_source_surface(pointer, image.pointer, Double(origin.x), Double(origin.y))
            cairo_rectangle(pointer, rect.x, rect.y, rect.width, rect.height)
            cairo_fill(pointer)
        }
    }

    /// The part of the canvas drawing can reach now (the clip), in pixels.
    public var clipExtents: Rect {
        var x0 = 0.0, y0 = 0.0, x1 = 0.0, y1 = 0.0
        cairo_clip_extents(pointer, &x0, &y0, &x1, &y1)
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    /// Blends `image` (premultiplied) over the canvas with its top-left at whole pixel `at`, inside `rect`:
    /// no scaling, so no filtering, only Cairo's plain "over".
    public func composite(_ image: ImageSurface, at origin: (x: Int, y: Int), in rect: Rect) {
        withState {
            cairo_set_source_surface(pointer, image.pointer, Double(origin.x), Double(origin.y))
            cairo_rectangle(pointer, rect.x, rect.y, rect.width, rect.height)
            cairo_fill(pointer)
        }
    }

    /// Paints 32-bit BGRx pixels (a decoded video frame, not copied) scaled into `dest`, inside a rounded `clip`,
    /// at `opacity`; nothing when the rows are not in Cairo's stride for that width.
    public func paint(bgrx pixels: UnsafeRawBufferPointer, size: PixelSize, stride: Int, in dest: Rect, clip clipRect: Rect,
                      radius: Double, opacity: Double) {
        guard let base = pixels.baseAddress, size.width > 0, size.height > 0, !dest.isEmpty,
              stride == Int(cairo_format_stride_for_width(CAIRO_FORMAT_RGB24, Int32(size.width))),
              pixels.count >= stride * size.height else { return }
        guard let image = cairo_image_surface_create_for_data(
            UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self)), CAIRO_FORMAT_RGB24,
            Int32(size.width), Int32(size.height), Int32(stride)) else { return }
        defer { cairo_surface_destroy(image) }
        withState {
            roundedRectPath(clipRect, radius: radius)
            cairo_clip(pointer)
            cairo_translate(pointer, dest.x, dest.y)
            cairo_scale(pointer, dest.width / Double(size.width), dest.height / Double(size.height))
            cairo_set_source_surface(pointer, image, 0, 0)
            cairo_pattern_set_filter(cairo_get_source(pointer), CAIRO_FILTER_GOOD)
            if opacity >= 1 { cairo_paint(pointer) } else { cairo_paint_with_alpha(pointer, opacity) }
        }
    }

    /// Draws another surface scaled into `dest`, clipped to `clip`; `replacing` copies its pixels instead of blending
    /// them (for a surface with no transparent pixel, the same picture for less).
    public func draw(_ image: ImageSurface, in dest: Rect, clip clipRect: Rect, replacing: Bool = false) {
        guard image.width > 0, image.height > 0, !dest.isEmpty else { return }
        withState {
            clip(to: clipRect)
            cairo_translate(pointer, dest.x, dest.y)
            cairo_scale(pointer, dest.width / Double(image.width), dest.height / Double(image.height))
            cairo_set_source_surface(pointer, image.pointer, 0, 0)
            cairo_pattern_set_filter(cairo_get_source(pointer), CAIRO_FILTER_GOOD)
            if replacing { cairo_set_operator(pointer, CAIRO_OPERATOR_SOURCE) }
            cairo_paint(pointer)
        }
    }
}
