import CGst

/// Reads the luma plane of decoded video buffers, for the probe: maps each buffer read-only with the layout its
/// caps describe (kept until the caps change) and lends the plane out for the length of a closure.
///
/// Used on one streaming thread.
final class LumaReader {
    private var info = GstVideoInfo()
    private var caps: MediaCaps?

    /// A decoded picture's luma plane: `stride` bytes a row, `width` of them pixels.
    struct Plane {
        let bytes: UnsafeRawBufferPointer
        let width: Int
        let height: Int
        let stride: Int
    }

    /// Calls `body` with the luma plane of `buffer`; nil when the caps are not video or the buffer cannot be
    /// mapped (a decoder's error).
    func withLuma<T>(_ buffer: MediaBuffer, caps: MediaCaps?, _ body: (Plane) -> T) -> T? {
        if let caps, caps !== self.caps {
            guard gst_video_info_from_caps(&info, caps.pointer) != 0 else { return nil }
            self.caps = caps
        }
        guard self.caps != nil else { return nil }
        var frame = GstVideoFrame()
        guard gst_video_frame_map(&frame, &info, buffer.pointer, GST_MAP_READ) != 0 else { return nil }
        defer { gst_video_frame_unmap(&frame) }
        let height = Int(info.height)
        let stride = Int(cgst_video_frame_plane_stride(&frame, 0))
        return body(Plane(bytes: UnsafeRawBufferPointer(start: cgst_video_frame_plane(&frame, 0), count: stride * height),
                          width: Int(info.width), height: height, stride: stride))
    }
}
