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

    /// The first sound stream's format; nil when there is no sound.
    var audioFormat: (sampleRate: Int, channels: Int)? {
        withFirstStream(.audio) { stream in
            (Int(gst_discoverer_audio_info_get_sample_rate(stream)), Int(gst_discoverer_audio_info_get_channels(stream)))
        }
    }

    /// The tags a player shows, each from the first stream that has it, and the cover art (its bytes and the file
    /// extension of its type).
    struct Tags {
        var title = "", artist = "", album = ""
        var cover: (bytes: [UInt8], fileExtension: String)?
    }

    var tags: Tags {
        var t = Tags()
        forEachTagList { list in
            func string(_ tag: String) -> String? {
                var value: UnsafeMutablePointer<gchar>?
                guard gst_tag_list_get_string(list, tag, &value) != 0, let value else { return nil }
                defer { g_free(value) }
                let s = String(cString: value).trimmingCharacters(in: .whitespacesAndNewlines)
                return s.isEmpty ? nil : s
            }
            if t.title.isEmpty, let v = string(GST_TAG_TITLE) { t.title = v }
            if t.artist.isEmpty, let v = string(GST_TAG_ARTIST) { t.artist = v }
            if t.album.isEmpty, let v = string(GST_TAG_ALBUM) { t.album = v }
            if t.cover == nil { t.cover = Self.image(in: list, GST_TAG_IMAGE) ?? Self.image(in: list, GST_TAG_PREVIEW_IMAGE) }
        }
        return t
    }

    private static func image(in list: UnsafePointer<GstTagList>, _ tag: String) -> (bytes: [UInt8], fileExtension: String)? {
        var sample: OpaquePointer?
        guard gst_tag_list_get_sample(list, tag, &sample) != 0, let sample else { return nil }
        defer { gst_sample_unref(sample) }
        guard let buffer = gst_sample_get_buffer(sample) else { return nil }
        var type = "jpg"
        if let caps = gst_sample_get_caps(sample), let s = gst_caps_get_structure(caps, 0),
           let n = gst_structure_get_name(s) {
            switch String(cString: n) {
            case "image/png": type = "png"
            case "image/jpeg": type = "jpg"
            case "image/gif": type = "gif"
            case "image/bmp": type = "bmp"
            default: return nil
            }
        }
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return nil }
        defer { gst_buffer_unmap(buffer, &map) }
        guard map.size > 0 else { return nil }
        return (Array(UnsafeBufferPointer(start: map.data, count: Int(map.size))), type)
    }

    /// Whether GStreamer takes `text` as a URI.
    static func isValidURI(_ text: String) -> Bool { gst_uri_is_valid(text) != 0 }

    /// The `file://` URI of a local path, or GStreamer's reason why there is none.
    static func uri(forFile path: String) -> Result<String, GstError> {
        Gst.initialize()
        var error: UnsafeMutablePointer<GError>?
        guard let u = gst_filename_to_uri(path, &error) else {
            return .failure(GstError.take(error, element: path, fallback: "no URI for it"))
        }
        defer { g_free(u) }
        return .success(String(cString: u))
    }
}
