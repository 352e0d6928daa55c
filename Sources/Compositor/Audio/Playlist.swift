import Foundation

/// What `--audio PATH` names, read into the files it plays: one audio file, an `.m3u`/`.m3u8` playlist (one path
/// or URI a line, `#` lines are comments, relative paths against the playlist's folder), or a folder (its files by
/// name; what is not audio there is skipped with a warning). Every file is discovered before anything starts, so a
/// bad one is refused with its name (and its playlist line) instead of going silent an hour into a run.
public enum Playlist {
    public static let extensions: Set<String> = ["m3u", "m3u8"]

    /// One line of a playlist: what it names, and where it said so (for messages).
    struct Entry: Equatable {
        let location: String
        let origin: String?
    }

    /// The entries of a playlist's text; `folder` resolves relative paths.
    static func entries(ofPlaylist text: String, named name: String, folder: String) -> [Entry] {
        var out: [Entry] = []
        for (i, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            var line = raw.trimmingCharacters(in: .whitespaces)
            if i == 0, line.hasPrefix("\u{FEFF}") { line.removeFirst() }
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let location = line.contains("://") || line.hasPrefix("/") || line.hasPrefix("~")
                ? line : (folder as NSString).appendingPathComponent(line)
            out.append(Entry(location: location, origin: "\(name) line \(i + 1)"))
        }
        return out
    }

    /// The files `source` plays, discovered, in order. `warn` hears about files of a folder that were skipped.
    public static func load(_ source: String, warn: (String) -> Void = { _ in }) throws(AudioChoice.Invalid) -> [AudioFile] {
        if source.contains("://") { return [try AudioFile.discover(source)] }
        let path = (source as NSString).expandingTildeInPath
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw AudioChoice.Invalid(description: "no such file '\(source)'; --audio takes none, ticks, tone[:HZ], "
                                      + "an audio file, an .m3u playlist or a folder of audio files")
        }
        if isDirectory.boolValue { return try folder(path, warn: warn) }
        guard extensions.contains((path as NSString).pathExtension.lowercased()) else {
            return [try AudioFile.discover(path)]
        }
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw AudioChoice.Invalid(description: "cannot read the playlist '\(source)': \(error.localizedDescription)")
        }
        let entries = entries(ofPlaylist: text, named: source, folder: (path as NSString).deletingLastPathComponent)
        guard !entries.isEmpty else {
            throw AudioChoice.Invalid(description: "the playlist '\(source)' is empty: it names no file (one path a line)")
        }
        var files: [AudioFile] = []
        for e in entries {
            do { files.append(try AudioFile.discover(e.location)) } catch {
                throw AudioChoice.Invalid(description: "\(e.origin ?? source): \(error.description)")
            }
        }
        return files
    }

    private static func folder(_ path: String, warn: (String) -> Void) throws(AudioChoice.Invalid) -> [AudioFile] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
            .filter { !$0.hasPrefix(".") }
            .sorted { $0.localizedStandardCompare($1) == .orderedAscending }
        var files: [AudioFile] = []
        for name in names {
            let full = (path as NSString).appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue,
                  !extensions.contains((name as NSString).pathExtension.lowercased()) else { continue }
            do { files.append(try AudioFile.discover(full)) } catch { warn("audio: skipped \(error.description)") }
        }
        guard !files.isEmpty else {
            throw AudioChoice.Invalid(description: "the folder '\(path)' holds no audio file GStreamer can read")
        }
        return files
    }
}
