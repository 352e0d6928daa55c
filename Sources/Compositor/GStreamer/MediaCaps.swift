import CGst

/// Owns one reference to a `GstCaps`: what a stream is (format, size, profile), as GStreamer negotiates it.
///
/// `@unchecked Sendable`: caps are never changed after they are made here or handed over by GStreamer (which
/// shares them between threads itself), and their reference count is atomic.
public final class MediaCaps: @unchecked Sendable, Equatable, CustomStringConvertible {
    let pointer: UnsafeMutablePointer<GstCaps>

    /// Parses caps text (`video/x-raw,format=I420,width=640,...`).
    public init(_ text: String) throws(GstError) {
        Gst.initialize()
        guard let c = gst_caps_from_string(text) else { throw GstError(element: "caps", message: "invalid caps '\(text)'") }
        pointer = c
    }

    /// Adds a reference of its own to caps the caller only borrows (transfer none).
    init(retaining pointer: UnsafeMutablePointer<GstCaps>) {
        self.pointer = gst_caps_ref(pointer)
    }

    deinit { gst_caps_unref(pointer) }

    public static func == (a: MediaCaps, b: MediaCaps) -> Bool {
        a.pointer == b.pointer || gst_caps_is_equal(a.pointer, b.pointer) != 0
    }

    public var description: String {
        guard let s = gst_caps_to_string(pointer) else { return "" }
        defer { g_free(s) }
        return String(cString: s)
    }

    /// Width and height of video caps; nil for anything else.
    public var videoSize: PixelSize? {
        guard let structure = gst_caps_get_structure(pointer, 0) else { return nil }
        var w: gint = 0, h: gint = 0
        guard gst_structure_get_int(structure, "width", &w) != 0, gst_structure_get_int(structure, "height", &h) != 0
        else { return nil }
        return PixelSize(width: Int(w), height: Int(h))
    }

    /// The raw video format ("BGRx", "I420"), nil for anything else.
    public var videoFormat: String? {
        guard let structure = gst_caps_get_structure(pointer, 0), let f = gst_structure_get_string(structure, "format")
        else { return nil }
        return String(cString: f)
    }

    /// A string field of the caps (h264parse's `profile`, `level`); nil when it has none.
    public func string(_ field: String) -> String? {
        guard let structure = gst_caps_get_structure(pointer, 0), let v = gst_structure_get_string(structure, field)
        else { return nil }
        return String(cString: v)
    }

    /// The sample rate of audio caps; nil for anything else.
    public var audioRate: Int? {
        guard let structure = gst_caps_get_structure(pointer, 0) else { return nil }
        var r: gint = 0
        guard gst_structure_get_int(structure, "rate", &r) != 0, r > 0 else { return nil }
        return Int(r)
    }
}
