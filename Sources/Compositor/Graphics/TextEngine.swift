import CPango
import Foundation

/// Owns the Pango context every layout of one renderer is made in.
///
/// One per renderer, used on one thread: Pango contexts and font maps are not thread-safe. Each engine has a
/// font map of its own: the default one belongs to the thread that asked for it, and a renderer made on the
/// main thread but drawing on its frame loop's thread shared it with every other renderer made there (several
/// streams in one soak corrupted pangoft2's font cache: "corrupted double-linked list"). Hinting of metrics is
/// off so a text's width does not change with its position, which keeps scrolling smooth and measurements exact.
public final class TextEngine {
    let context: OpaquePointer

    public init() {
        let map = pango_cairo_font_map_new()
        context = pango_font_map_create_context(map)!
        // The context holds its own reference to the map.
        g_object_unref(UnsafeMutableRawPointer(map))
        let options = cairo_font_options_create()!
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
        cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
        pango_cairo_context_set_font_options(context, options)
        cairo_font_options_destroy(options)
        pango_cairo_context_set_resolution(context, 96)
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(context))
    }
}
