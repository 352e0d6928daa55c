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
        let found: Discovered
        do { found = try Discovered.read(uri, timeout: timeout) } catch {
            switch error {
            case .noDiscoverer: throw AudioChoice.Invalid(description: "cannot read '\(name)': GStreamer's discoverer is missing")
            case .unreadable(let why): throw AudioChoice.Invalid(description: "cannot read '\(name)': \(why ?? "no answer")")
            case .missingPlugin(let why):
                throw AudioChoice.Invalid(description: "'\(name)' needs a GStreamer plugin that is not installed (\(why ?? "unknown format"))")
            case .timeout: throw AudioChoice.Invalid(description: "'\(name)' did not answer within \(Int(timeout)) s")
            case .notMedia(let why):
                throw AudioChoice.Invalid(description: "'\(name)' is not an audio file GStreamer can read: \(why ?? "unknown error")")
            }
        }
        guard var file = found.withFirstStream(.audio, { stream in
            AudioFile(uri: uri, name: name, title: "", artist: "", album: "", duration: found.duration,
                      sampleRate: Int(gst_discoverer_audio_info_get_sample_rate(stream)),
                      channels: Int(gst_discoverer_audio_info_get_channels(stream)), cover: nil)
        }) else {
            throw AudioChoice.Invalid(description: "'\(name)' holds no sound (is it a video or a picture?)")
        }
        found.forEachTagList { file.read($0) }
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
