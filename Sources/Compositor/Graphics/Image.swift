import CPango
import CRsvg
import Foundation

/// Why an image could not be used, with the file named.
public struct ImageError: Error, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "cannot load image '\(path)': \(reason)" }
}

/// A decoded image: pixels (PNG, JPEG, anything gdk-pixbuf reads) or a vector document (SVG), which is
/// rendered at the size it is drawn, so it stays sharp at every render size.
public final class Picture {
    enum Content {
        case raster(ImageSurface)
        case svg(UnsafeMutablePointer<RsvgHandle>)
    }

    let content: Content
    public let path: String
    /// Natural size in pixels.
    public let width: Double
    public let height: Double

    private init(content: Content, path: String, width: Double, height: Double) {
        self.content = content
        self.path = path
        self.width = width
        self.height = height
    }

    deinit {
        if case .svg(let handle) = content { g_object_unref(UnsafeMutableRawPointer(handle)) }
    }

    /// Loads by content, not by name: SVG when the file is XML with an `<svg` element, else gdk-pixbuf.
    public static func load(path: String) throws(ImageError) -> Picture {
        if let svg = BuiltinPictures.svg(named: path) { return try loadSVG(data: Array(svg.utf8), name: path) }
        guard FileManager.default.fileExists(atPath: path) else {
            throw ImageError(path: path, reason: "no such file")
        }
        guard let head = FileManager.default.contents(atPath: path)?.prefix(512) else {
            throw ImageError(path: path, reason: "not readable")
        }
        if head.isEmpty { throw ImageError(path: path, reason: "the file is empty") }
        let text = String(decoding: head, as: UTF8.self).lowercased()
        if text.contains("<svg") || path.lowercased().hasSuffix(".svg") {
            return try loadSVG(path: path)
        }
        return try loadRaster(path: path)
    }

    private static func loadSVG(path: String) throws(ImageError) -> Picture {
        var error: UnsafeMutablePointer<GError>?
        guard let handle = rsvg_handle_new_from_file(path, &error) else {
            throw ImageError(path: path, reason: takeMessage(error) ?? "not a valid SVG document")
        }
        var w = 0.0, h = 0.0
        if rsvg_handle_get_intrinsic_size_in_pixels(handle, &w, &h) == 0 || w <= 0 || h <= 0 {
            // No usable width/height: assume a square, the viewBox is scaled into it.
            (w, h) = (512, 512)
        }
        return Picture(content: .svg(handle), path: path, width: w, height: h)
    }

    /// Loads SVG text held in memory.
    static func loadSVG(data: [UInt8], name: String) throws(ImageError) -> Picture {
        var error: UnsafeMutablePointer<GError>?
        guard let handle = rsvg_handle_new_from_data(data, gsize(data.count), &error) else {
            throw ImageError(path: name, reason: takeMessage(error) ?? "not a valid SVG document")
        }
        var w = 0.0, h = 0.0
        if rsvg_handle_get_intrinsic_size_in_pixels(handle, &w, &h) == 0 || w <= 0 || h <= 0 { (w, h) = (512, 512) }
        return Picture(content: .svg(handle), path: name, width: w, height: h)
    }

    private static func loadRaster(path: String) throws(ImageError) -> Picture {
        var error: UnsafeMutablePointer<GError>?
        guard let pixbuf = gdk_pixbuf_new_from_file(path, &error) else {
            throw ImageError(path: path, reason: takeMessage(error) ?? "not a PNG, JPEG or other known image")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(pixbuf)) }
        let w = Int(gdk_pixbuf_get_width(pixbuf)), h = Int(gdk_pixbuf_get_height(pixbuf))
        let channels = Int(gdk_pixbuf_get_n_channels(pixbuf))
        let hasAlpha = gdk_pixbuf_get_has_alpha(pixbuf) != 0
        let rowstride = Int(gdk_pixbuf_get_rowstride(pixbuf))
        guard let pixels = gdk_pixbuf_read_pixels(pixbuf), channels >= 3 else {
            throw ImageError(path: path, reason: "unsupported pixel layout")
        }
        let surface: ImageSurface
        do { surface = try ImageSurface(width: w, height: h, format: .argb32) } catch {
            throw ImageError(path: path, reason: "\(error)")
        }
        // gdk-pixbuf rows are R, G, B[, A] straight alpha; Cairo wants native-endian premultiplied ARGB.
        let stride = surface.stride
        let dst = cairo_image_surface_get_data(surface.pointer)!
        for y in 0..<h {
            let src = pixels + y * rowstride
            let row = UnsafeMutableRawPointer(dst + y * stride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<w {
                let p = src + x * channels
                let a = hasAlpha ? UInt32(p[3]) : 255
                let r = UInt32(p[0]) * a / 255, g = UInt32(p[1]) * a / 255, b = UInt32(p[2]) * a / 255
                row[x] = (a << 24) | (r << 16) | (g << 8) | b
            }
        }
        surface.markDirty()
        return Picture(content: .raster(surface), path: path, width: Double(w), height: Double(h))
    }

    static func takeMessage(_ error: UnsafeMutablePointer<GError>?) -> String? {
        guard let error else { return nil }
        defer { g_error_free(error) }
        return String(cString: error.pointee.message)
    }

    /// Where the image lands inside `box` for a fit mode.
    public func placement(in box: Rect, fit: ImageFit) -> Rect {
        guard width > 0, height > 0 else { return box }
        let sx = box.width / width, sy = box.height / height
        let scale: Double
        switch fit {
        case .fit: scale = min(sx, sy)
        case .fill: scale = max(sx, sy)
        case .center: scale = min(1, min(sx, sy))
        }
        let w = width * scale, h = height * scale
        return Rect(x: box.x + (box.width - w) / 2, y: box.y + (box.height - h) / 2, width: w, height: h)
    }

    /// Draws into `box` with `fit`, clipped to the box.
    public func draw(on canvas: Canvas, in box: Rect, fit: ImageFit) {
        let dest = placement(in: box, fit: fit)
        switch content {
        case .raster(let surface):
            canvas.draw(surface, in: dest, clip: box)
        case .svg(let handle):
            // librsvg is slow: rasterize once per drawn size, then paint the pixels like any image.
            let w = Int(dest.width.rounded(.up)), h = Int(dest.height.rounded(.up))
            guard w > 0, h > 0 else { return }
            if svgCache?.width != w || svgCache?.height != h {
                svgCache = rasterize(handle, width: w, height: h)
            }
            if let cached = svgCache {
                canvas.draw(cached, in: Rect(x: dest.x, y: dest.y, width: Double(w), height: Double(h)), clip: box)
            } else {
                canvas.placeholder(box, Color(red: 0.6, green: 0.6, blue: 0.6))
            }
        }
    }

    private var svgCache: ImageSurface?

    private func rasterize(_ handle: UnsafeMutablePointer<RsvgHandle>, width: Int, height: Int) -> ImageSurface? {
        guard let surface = try? ImageSurface(width: width, height: height, format: .argb32) else { return nil }
        let canvas = Canvas(surface: surface)
        var viewport = RsvgRectangle(x: 0, y: 0, width: Double(width), height: Double(height))
        var error: UnsafeMutablePointer<GError>?
        // librsvg shapes an SVG's text with its thread's default Pango font map, which keeps the fonts and font sets
        // of every scale it was asked for, and a frame loop's thread lives as long as the run: each size a picture
        // was drawn at (a browser window's rendition has a size of its own) held about 65 KiB more for good. Dropping
        // the map after each drawing frees them; the next drawing makes a new one (about 2 ms, once per size).
        defer { pango_cairo_font_map_set_default(nil) }
        guard rsvg_handle_render_document(handle, canvas.pointer, &viewport, &error) != 0 else {
            _ = Picture.takeMessage(error)
            return nil
        }
        surface.flush()
        return surface
    }
}
