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
            guard Discovered.isValidURI(location) else {
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
        switch Discovered.uri(forFile: path) {
        case .success(let u): return (u, location)
        case .failure(let e): throw AudioChoice.Invalid(description: "'\(location)': \(e.message)")
        }
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
        guard let format = found.audioFormat else {
            throw AudioChoice.Invalid(description: "'\(name)' holds no sound (is it a video or a picture?)")
        }
        let tags = found.tags
        return AudioFile(uri: uri, name: name, title: tags.title, artist: tags.artist, album: tags.album,
                         duration: found.duration, sampleRate: format.sampleRate, channels: format.channels,
                         cover: tags.cover.map { Cover(bytes: $0.bytes, fileExtension: $0.fileExtension) })
    }
}
