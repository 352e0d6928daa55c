import CGst
import Foundation

/// What GStreamer's discoverer read of one URI before anything plays (its streams, length and tags). Owns the
/// discoverer's answer. Callers say in their own words what a failure means for them (a music file that is not
/// sound, a video layer that is not video).
final class Discovered {
    enum Failure: Error {
        /// The discoverer could not be made (a broken GStreamer install).
        case noDiscoverer
        /// No answer at all, with GStreamer's reason.
        case unreadable(String?)
        case missingPlugin(String?)
        case timeout
        /// An answer that is not media GStreamer reads, with its reason.
        case notMedia(String?)
    }

    enum Kind { case audio, video }

    private let info: OpaquePointer

    private init(_ info: OpaquePointer) { self.info = info }
    deinit { g_object_unref(UnsafeMutableRawPointer(info)) }

    static func read(_ uri: String, timeout: TimeInterval) throws(Failure) -> Discovered {
        Gst.initialize()
        var error: UnsafeMutablePointer<GError>?
        guard let discoverer = gst_discoverer_new(GstClockTime(timeout * 1e9), &error) else {
            if let error { g_error_free(error) }
            throw .noDiscoverer
        }
        defer { g_object_unref(UnsafeMutableRawPointer(discoverer)) }
        let answer = gst_discoverer_discover_uri(discoverer, uri, &error)
        let why = error.map { String(cString: $0.pointee.message) }
        if let error { g_error_free(error) }
        guard let answer else { throw .unreadable(why) }
        let found = Discovered(answer)
        switch gst_discoverer_info_get_result(answer) {
        case GST_DISCOVERER_OK: return found
        case GST_DISCOVERER_MISSING_PLUGINS: throw .missingPlugin(why)
        case GST_DISCOVERER_TIMEOUT: throw .timeout
        default: throw .notMedia(why)
        }
    }

    /// `body` with the first stream of `kind` (valid only inside it); nil when there is none.
    func withFirstStream<T>(_ kind: Kind, _ body: (OpaquePointer) -> T) -> T? {
        let list = kind == .audio ? gst_discoverer_info_get_audio_streams(info) : gst_discoverer_info_get_video_streams(info)
        defer { gst_discoverer_stream_info_list_free(list) }
        return list?.pointee.data.map { body(OpaquePointer($0)) }
    }

    /// Seconds; 0 when the file does not say.
    var duration: Double {
        let nanoseconds = gst_discoverer_info_get_duration(info)
        return nanoseconds == cgst_clock_time_none() ? 0 : Double(nanoseconds) / 1e9
    }

    /// Each stream's tags (ID3 and Vorbis comments sit on the audio stream, MP4 atoms on the container).
    func forEachTagList(_ body: (UnsafePointer<GstTagList>) -> Void) {
        let all = gst_discoverer_info_get_stream_list(info)
        defer { gst_discoverer_stream_info_list_free(all) }
        var node = all
        while let n = node {
            if let tags = gst_discoverer_stream_info_get_tags(OpaquePointer(n.pointee.data)) { body(tags) }
            node = n.pointee.next
        }
    }
}
