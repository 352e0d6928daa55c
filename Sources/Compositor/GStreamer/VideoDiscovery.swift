import CGst
import Foundation

/// What a video file holds, read by GStreamer's discoverer before anything plays: a scene that names a file
/// without pictures (a text, a sound file) is refused at its line, not found out at run time.
public enum VideoDiscovery {
    /// The size of `uri`'s first video stream; throws GStreamer's reason, or says the file holds no video.
    public static func firstPicture(of uri: String, timeout: TimeInterval = 10) throws(GstError) -> PixelSize {
        Gst.initialize()
        let name = URL(string: uri)?.lastPathComponent ?? uri
        var error: UnsafeMutablePointer<GError>?
        guard let discoverer = gst_discoverer_new(GstClockTime(timeout * 1e9), &error) else {
            if let error { g_error_free(error) }
            throw GstError(element: "discoverer", message: "GStreamer's discoverer is missing")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(discoverer)) }
        let info = gst_discoverer_discover_uri(discoverer, uri, &error)
        let why = error.map { String(cString: $0.pointee.message) }
        if let error { g_error_free(error) }
        guard let info else { throw GstError(element: name, message: "cannot read it: \(why ?? "no answer")") }
        defer { g_object_unref(UnsafeMutableRawPointer(info)) }
        switch gst_discoverer_info_get_result(info) {
        case GST_DISCOVERER_OK: break
        case GST_DISCOVERER_MISSING_PLUGINS:
            throw GstError(element: name, message: "needs a GStreamer plugin that is not installed (\(why ?? "unknown format"))")
        case GST_DISCOVERER_TIMEOUT:
            throw GstError(element: name, message: "did not answer within \(Int(timeout)) s")
        default:
            throw GstError(element: name, message: "is not a video GStreamer can read: \(why ?? "unknown error")")
        }
        let video = gst_discoverer_info_get_video_streams(info)
        defer { gst_discoverer_stream_info_list_free(video) }
        guard let first = video?.pointee.data else {
            throw GstError(element: name, message: "holds no video (is it a sound file or a picture?)")
        }
        let stream = OpaquePointer(first)
        return PixelSize(width: Int(gst_discoverer_video_info_get_width(stream)),
                         height: Int(gst_discoverer_video_info_get_height(stream)))
    }
}
