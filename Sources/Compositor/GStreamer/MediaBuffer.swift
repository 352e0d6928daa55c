import CGst

/// Owns one reference to a `GstBuffer`: an encoded frame, or a raw one on its way to the encoder. The reference
/// goes with the last copy of this object, so a buffer is kept exactly as long as someone holds it.
///
/// `@unchecked Sendable`: GStreamer's reference counts are atomic, and this type only changes a buffer through a
/// fresh copy (`restamped`) or before it is handed to anyone (`stamp`), so sharing one between threads shares
/// data nobody writes.
public final class MediaBuffer: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<GstBuffer>

    /// Takes over a reference the caller owned (transfer full).
    init(takingOwnership pointer: UnsafeMutablePointer<GstBuffer>) {
        self.pointer = pointer
    }

    /// Adds a reference of its own to a buffer the caller only borrows (transfer none).
    init(retaining pointer: UnsafeMutablePointer<GstBuffer>) {
        self.pointer = gst_buffer_ref(pointer)
    }

    deinit { gst_buffer_unref(pointer) }

    /// A new buffer of `bytes` bytes, written by `body` before anyone else sees it (audio samples drawn here).
    public static func filled(bytes: Int, _ body: (UnsafeMutableRawBufferPointer) -> Void) -> MediaBuffer? {
        guard let b = gst_buffer_new_allocate(nil, gsize(bytes), nil) else { return nil }
        var info = GstMapInfo()
        guard gst_buffer_map(b, &info, GST_MAP_WRITE) != 0 else {
            gst_buffer_unref(b)
            return nil
        }
        body(UnsafeMutableRawBufferPointer(start: info.data, count: bytes))
        gst_buffer_unmap(b, &info)
        return MediaBuffer(takingOwnership: b)
    }

    /// Reads the buffer's bytes (decoded audio in the probe); nil when it cannot be mapped.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R? {
        var info = GstMapInfo()
        guard gst_buffer_map(pointer, &info, GST_MAP_READ) != 0 else { return nil }
        defer { gst_buffer_unmap(pointer, &info) }
        return body(UnsafeRawBufferPointer(start: info.data, count: Int(info.size)))
    }

    private static func optional(_ t: GstClockTime) -> MediaTime? { t == cgst_clock_time_none() ? nil : MediaTime(t) }
    private static func gst(_ t: MediaTime?) -> GstClockTime { t.map { GstClockTime($0) } ?? cgst_clock_time_none() }

    public var pts: MediaTime? { Self.optional(cgst_buffer_pts(pointer)) }
    public var dts: MediaTime? { Self.optional(cgst_buffer_dts(pointer)) }
    public var duration: MediaTime? { Self.optional(pointer.pointee.duration) }
    /// A frame a decoder can start from (no DELTA_UNIT flag).
    public var isKeyFrame: Bool { cgst_buffer_is_delta(pointer) == 0 }
    /// Bytes of data.
    public var size: Int { Int(gst_buffer_get_size(pointer)) }

    /// A raw picture's own size, row stride and first row's offset (its video meta), which can differ from its caps;
    /// nil without one.
    public var videoLayout: (size: PixelSize, stride: Int, offset: Int)? {
        var w: gint = 0, h: gint = 0, stride: gint = 0, offset: gsize = 0
        guard cgst_buffer_video_size(pointer, &w, &h, &stride, &offset) != 0, w > 0, h > 0 else { return nil }
        return (PixelSize(width: Int(w), height: Int(h)), Int(stride), Int(offset))
    }

    /// A new buffer sharing this one's memory (no copy of the data) with timestamps of its own.
    public func restamped(pts: MediaTime?, dts: MediaTime?) -> MediaBuffer {
        let copy = MediaBuffer(takingOwnership: gst_buffer_copy(pointer)!)
        cgst_buffer_set_pts_dts(copy.pointer, Self.gst(pts), Self.gst(dts))
        return copy
    }

    /// A new buffer sharing this one's memory and timestamps: one that can be stamped anew while this one travels.
    public func shallowCopy() -> MediaBuffer { MediaBuffer(takingOwnership: gst_buffer_copy(pointer)!) }

    /// Sets the timestamps of a buffer that nobody else has been given yet (a frame just drawn).
    public func stamp(pts: MediaTime, duration: MediaTime) {
        cgst_buffer_set_timing(pointer, GstClockTime(pts), GstClockTime(duration))
        cgst_buffer_set_pts_dts(pointer, GstClockTime(pts), cgst_clock_time_none())
    }

    /// True when this is the only reference to the buffer and to its memory: it may be written again.
    var isExclusive: Bool {
        let object = UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstMiniObject.self)
        return gst_mini_object_is_writable(object) != 0 && gst_buffer_is_all_memory_writable(pointer) != 0
    }

    /// Forgets the flags of a previous frame (DISCONT, markers) before the buffer carries a new one.
    func clearFlags() { pointer.pointee.mini_object.flags = 0 }

    /// A new reference for a C function that takes one (transfer full).
    func passRetained() -> UnsafeMutablePointer<GstBuffer> { gst_buffer_ref(pointer) }

    /// Calls `body` with the planes of this buffer read as an I420 picture of `size` (its video meta's strides
    /// when it has one, GStreamer's default layout otherwise); nil when it cannot be mapped so.
    public func withI420Planes<T>(size: PixelSize, _ body: (I420Converter.Planes) throws -> T) rethrows -> T? {
        var info = GstVideoInfo()
        guard gst_video_info_set_format(&info, GST_VIDEO_FORMAT_I420, guint(size.width), guint(size.height)) != 0 else { return nil }
        var frame = GstVideoFrame()
        guard gst_video_frame_map(&frame, &info, pointer, GST_MAP_READ) != 0 else { return nil }
        defer { gst_video_frame_unmap(&frame) }
        func plane(_ i: guint) -> UnsafeMutablePointer<UInt8> { cgst_video_frame_plane(&frame, i)!.assumingMemoryBound(to: UInt8.self) }
        return try body(I420Converter.Planes(
            y: plane(0), yStride: Int(cgst_video_frame_plane_stride(&frame, 0)),
            u: plane(1), uStride: Int(cgst_video_frame_plane_stride(&frame, 1)),
            v: plane(2), vStride: Int(cgst_video_frame_plane_stride(&frame, 2))))
    }
}
