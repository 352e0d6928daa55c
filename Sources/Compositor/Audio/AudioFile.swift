import CGst
import Foundation

/// One entry of a music playlist as GStreamer's discoverer reads it before anything plays: that it holds sound,
/// its length, its format and its tags (title, artist, album, cover art).
public struct AudioFile: Sendable, Equatable {
    /// The cover art a file carries (an ID3 APIC frame, a FLAC picture, an MP4 `covr` atom): its bytes and the
    /// file extension of its type.
    public struct Cover: Sendable, Equatable {
        public let bytes: [UInt8]
        public let fileExtension: String
    }

    public let uri: String
    /// What messages call it: the path of a local file, else the URI.
    public let name: String
    public var title: String
    public var artist: String
    public var album: String
    /// Seconds; 0 when the file does not say.
    public var duration: Double
    public var sampleRate: Int
    public var channels: Int
    public var cover: Cover?

    /// The title the card shows: the tag, else the file name without its extension.
    public var displayTitle: String {
        if !title.isEmpty { return title }
        return ((name as NSString).lastPathComponent as NSString).deletingPathExtension
    }

    /// The URI of a path or URI (`file:///…`, `http://…`); a local file must exist and be readable.
    static func uri(of location: String) throws(AudioChoice.Invalid) -> (uri: String, name: String) {
        if location.contains("://") {
            guard gst_uri_is_valid(location) != 0 else {
                throw AudioChoice.Invalid(description: "'\(location)' is not a valid URI")
            }
            if location.hasPrefix("file://"), let path = URL(string: location)?.path {
                try checkReadable(path)
                return (location, path)
            }
            return (location, location)
        }
        let path = (location as NSString).expandingTildeInPath
        try checkReadable(path)
        Gst.initialize()
        var error: UnsafeMutablePointer<GError>?
        guard let u = gst_filename_to_uri(path, &error) else {
            let why = error.map { String(cString: $0.pointee.message) } ?? "no URI for it"
            if let error { g_error_free(error) }
            throw AudioChoice.Invalid(description: "'\(location)': \(why)")
        }
        defer { g_free(u) }
        return (String(cString: u), location)
    }

    private static func checkReadable(_ path: String) throws(AudioChoice.Invalid) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw AudioChoice.Invalid(description: "no such file '\(path)'")
        }
        guard !isDirectory.boolValue else {
            throw AudioChoice.Invalid(description: "'\(path)' is a folder, not an audio file")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw AudioChoice.Invalid(description: "'\(path)' cannot be read (permissions)")
        }
    }

    /// Reads `location` (a path or URI) with the discoverer; throws, naming the file, when it does not exist, is
    /// not something GStreamer reads, or holds no sound.
    public static func discover(_ location: String, timeout: TimeInterval = 10) throws(AudioChoice.Invalid) -> AudioFile {
        let (uri, name) = try uri(of: location)
        Gst.initialize()
        var error: UnsafeMutablePointer<GError>?
        guard let discoverer = gst_discoverer_new(GstClockTime(timeout * 1e9), &error) else {
            if let error { g_error_free(error) }
            throw AudioChoice.Invalid(description: "cannot read '\(name)': GStreamer's discoverer is missing")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(discoverer)) }
        let info = gst_discoverer_discover_uri(discoverer, uri, &error)
        let why = error.map { String(cString: $0.pointee.message) }
        if let error { g_error_free(error) }
        guard let info else { throw AudioChoice.Invalid(description: "cannot read '\(name)': \(why ?? "no answer")") }
        defer { g_object_unref(UnsafeMutableRawPointer(info)) }
        switch gst_discoverer_info_get_result(info) {
        case GST_DISCOVERER_OK: break
        case GST_DISCOVERER_MISSING_PLUGINS:
            throw AudioChoice.Invalid(description: "'\(name)' needs a GStreamer plugin that is not installed (\(why ?? "unknown format"))")
        case GST_DISCOVERER_TIMEOUT:
            throw AudioChoice.Invalid(description: "'\(name)' did not answer within \(Int(timeout)) s")
        default:
            throw AudioChoice.Invalid(description: "'\(name)' is not an audio file GStreamer can read: \(why ?? "unknown error")")
        }
        let audio = gst_discoverer_info_get_audio_streams(info)
        defer { gst_discoverer_stream_info_list_free(audio) }
        guard let first = audio?.pointee.data else {
            throw AudioChoice.Invalid(description: "'\(name)' holds no sound (is it a video or a picture?)")
        }
        let stream = OpaquePointer(first)
        let nanoseconds = gst_discoverer_info_get_duration(info)
        var file = AudioFile(uri: uri, name: name, title: "", artist: "", album: "",
                             duration: nanoseconds == cgst_clock_time_none() ? 0 : Double(nanoseconds) / 1e9,
                             sampleRate: Int(gst_discoverer_audio_info_get_sample_rate(stream)),
                             channels: Int(gst_discoverer_audio_info_get_channels(stream)), cover: nil)
        // Tags sit on the streams (ID3 and Vorbis comments on the audio, MP4 atoms on the container): read them all.
        let all = gst_discoverer_info_get_stream_list(info)
        defer { gst_discoverer_stream_info_list_free(all) }
        var node = all
        while let n = node {
            if let tags = gst_discoverer_stream_info_get_tags(OpaquePointer(n.pointee.data)) { file.read(tags) }
            node = n.pointee.next
        }
        return file
    }

    /// Fills what is still empty from a tag list.
    private mutating func read(_ list: UnsafePointer<GstTagList>) {
        func string(_ tag: String) -> String? {
            var value: UnsafeMutablePointer<gchar>?
            guard gst_tag_list_get_string(list, tag, &value) != 0, let value else { return nil }
            defer { g_free(value) }
            let s = String(cString: value).trimmingCharacters(in: .whitespacesAndNewlines)
            return s.isEmpty ? nil : s
        }
        if title.isEmpty, let t = string(GST_TAG_TITLE) { title = t }
        if artist.isEmpty, let a = string(GST_TAG_ARTIST) { artist = a }
        if album.isEmpty, let a = string(GST_TAG_ALBUM) { album = a }
        if cover == nil { cover = Self.image(in: list, GST_TAG_IMAGE) ?? Self.image(in: list, GST_TAG_PREVIEW_IMAGE) }
    }

    private static func image(in list: UnsafePointer<GstTagList>, _ tag: String) -> Cover? {
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
        return Cover(bytes: Array(UnsafeBufferPointer(start: map.data, count: Int(map.size))), fileExtension: type)
    }
}
