import CPango
import Foundation

/// Owns one `PangoLayout`: a run of text shaped with a font at a pixel size, optionally wrapped and
/// ellipsized to a width. Pango does the shaping, bidi (Arabic, Hebrew) and font fallback (CJK, emoji).
public final class TextLayout {
    public typealias Alignment = TextAlignment

    let pointer: OpaquePointer
    public let text: String
    public let pixelSize: Double

    /// The longest text a layout takes; beyond it the text is cut (a 100 kB memo stays cheap to shape).
    public static let maximumCharacters = 4000

    /// - Parameters:
    ///   - width: wrap or ellipsize at this width in pixels; nil for one unbounded line.
    ///   - maxLines: with `width`, at most this many lines, the last one ellipsized.
    public init(engine: TextEngine, text: String, font: FontStyle, pixelSize: Double, width: Double? = nil,
                maxLines: Int = 1, alignment: Alignment = .leading, ellipsize: Bool = true) {
        let cut = text.count > Self.maximumCharacters ? String(text.prefix(Self.maximumCharacters)) + "…" : text
        // Pango wants valid UTF-8 without NUL: Swift strings are valid; NUL and other C0 controls become spaces.
        let clean = String(String.UnicodeScalarView(cut.unicodeScalars.map {
            ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7f ? " " : $0
        }))
        self.text = clean
        self.pixelSize = max(1, pixelSize)
        pointer = pango_layout_new(engine.context)!
        let desc = pango_font_description_from_string(font.pangoDescription)!
        pango_font_description_set_absolute_size(desc, self.pixelSize * Double(PANGO_SCALE))
        pango_layout_set_font_description(pointer, desc)
        pango_font_description_free(desc)
        clean.withCString { pango_layout_set_text(pointer, $0, Int32(clean.utf8.count)) }
        pango_layout_set_auto_dir(pointer, 1)
        if let width {
            pango_layout_set_width(pointer, Int32(max(1, width) * Double(PANGO_SCALE)))
            if maxLines <= 1 {
                pango_layout_set_single_paragraph_mode(pointer, 1)
                pango_layout_set_wrap(pointer, PANGO_WRAP_WORD_CHAR)
                pango_layout_set_height(pointer, -1)
            } else {
                pango_layout_set_wrap(pointer, PANGO_WRAP_WORD_CHAR)
                pango_layout_set_height(pointer, Int32(-maxLines))
            }
            pango_layout_set_ellipsize(pointer, ellipsize ? PANGO_ELLIPSIZE_END : PANGO_ELLIPSIZE_NONE)
        } else {
            pango_layout_set_single_paragraph_mode(pointer, 1)
        }
        switch alignment {
        case .leading: pango_layout_set_alignment(pointer, PANGO_ALIGN_LEFT)
        case .center: pango_layout_set_alignment(pointer, PANGO_ALIGN_CENTER)
        case .trailing: pango_layout_set_alignment(pointer, PANGO_ALIGN_RIGHT)
        }
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(pointer))
    }

    /// The logical box (advance widths and line heights) relative to the draw origin. Measured once: a layout never
    /// changes after `init`, and widgets read its size every time they draw it (the ink box, which Pango computes
    /// from every glyph's outline, is measured only when asked for).
    public private(set) lazy var logicalRect: Rect = {
        var logical = PangoRectangle()
        pango_layout_get_extents(pointer, nil, &logical)
        return Self.pixels(logical)
    }()
    /// The box of inked pixels relative to the draw origin.
    public var inkRect: Rect {
        var ink = PangoRectangle()
        pango_layout_get_extents(pointer, &ink, nil)
        return Self.pixels(ink)
    }
    public var width: Double { logicalRect.width }
    public var height: Double { logicalRect.height }
    public var lineCount: Int { Int(pango_layout_get_line_count(pointer)) }
    public var isEllipsized: Bool { pango_layout_is_ellipsized(pointer) != 0 }
    /// Characters no installed font could draw (shown as boxes): 0 when fallback found a glyph for each.
    public var unknownGlyphs: Int { Int(pango_layout_get_unknown_glyphs_count(pointer)) }

    private static func pixels(_ p: PangoRectangle) -> Rect {
        let s = Double(PANGO_SCALE)
        return Rect(x: Double(p.x) / s, y: Double(p.y) / s, width: Double(p.width) / s, height: Double(p.height) / s)
    }

    /// Draws with the layout's top-left at (x, y).
    public func draw(on canvas: Canvas, x: Double, y: Double, color: Color) {
        canvas.setColor(color)
        cairo_move_to(canvas.pointer, x, y)
        pango_cairo_show_layout(canvas.pointer, pointer)
    }

    /// The largest pixel size at which `text` fits `box` (width and height), capped at `maxSize`.
    /// Heights scale linearly with size, so one measurement gives the answer; the loop only corrects rounding.
    public static func fitting(engine: TextEngine, text: String, font: FontStyle, box: Rect, maxSize: Double,
                               minSize: Double = 4, maxLines: Int = 1,
                               alignment: Alignment = .leading, whole: Bool = false) -> TextLayout {
        let probe = TextLayout(engine: engine, text: text.isEmpty ? " " : text, font: font, pixelSize: 100)
        let lineHeight = max(1, probe.height) / 100
        var size = min(maxSize, box.height / (lineHeight * Double(max(1, maxLines))))
        if maxLines == 1 && probe.width > 0 {
            // Shrink to fit the width too, but not below 70 % of the height-fitted size: past that, ellipsize. A text
            // that must stay whole (a time) shrinks as far as it needs.
            let widthFit = box.width / (probe.width / 100)
            size = min(size, whole ? widthFit : max(widthFit, size * 0.7))
        }
        size = max(minSize, size.rounded(.down))
        var layout = TextLayout(engine: engine, text: text, font: font, pixelSize: size, width: box.width,
                                maxLines: maxLines, alignment: alignment)
        while (layout.height > box.height + 0.01 || (whole && layout.isEllipsized)) && size > minSize {
            size = max(minSize, size - max(1, size * 0.05).rounded(.down))
            layout = TextLayout(engine: engine, text: text, font: font, pixelSize: size, width: box.width,
                                maxLines: maxLines, alignment: alignment)
        }
        return layout
    }
}
