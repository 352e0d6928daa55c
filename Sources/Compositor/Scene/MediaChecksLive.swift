import Foundation

/// The media checks a scene gets here, where the libraries are: a picture decodes (Cairo, librsvg, gdk-pixbuf), a
/// file holds video (GStreamer's discoverer), a font is installed (fontconfig through Pango).
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
