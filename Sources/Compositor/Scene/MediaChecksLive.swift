import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The media checks a scene gets here, where the libraries are: a picture decodes (Cairo, librsvg, gdk-pixbuf), a
/// file holds video (GStreamer's discoverer), a font is installed (fontconfig through Pango), a web page's host
/// resolves (the system's resolver).
public struct MediaChecksLive: MediaChecks {
    public init() {}

    public func pictureProblem(_ path: String) -> String? {
        do { _ = try Picture.load(path: path) } catch { return "\(error)" }
        return nil
    }

    public func videoProblem(_ uri: String) -> String? {
        do { _ = try VideoDiscovery.firstPicture(of: uri) } catch { return error.message }
        return nil
    }

    public func missingFonts(in family: String) -> [String] { FontCatalog.missing(in: family) }

    /// Resolves the name as the system does (getaddrinfo): a name that does not resolve now is refused when the
    /// scene is read, instead of a page that never shows.
    public func hostProblem(_ host: String) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let result = getaddrinfo(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), nil, &hints, &list)
        if let list { freeaddrinfo(list) }
        return result == 0 ? nil : "the host '\(host)' does not resolve (\(String(cString: gai_strerror(result))))"
    }
}

extension SceneLoader {
    /// Reads and parses a scene file, with every media check.
    public static func load(path: String, warn: (String) -> Void = { _ in }) throws(SceneError) -> Scene {
        try load(path: path, checks: MediaChecksLive(), warn: warn)
    }

    /// Parses scene text, with every media check; `file` is used in messages, `baseDirectory` resolves paths.
    public static func parse(_ text: String, file: String, baseDirectory: String = ".",
                             warn: (String) -> Void = { _ in }) throws(SceneError) -> Scene {
        try parse(text, file: file, baseDirectory: baseDirectory, checks: MediaChecksLive(), warn: warn)
    }
}
