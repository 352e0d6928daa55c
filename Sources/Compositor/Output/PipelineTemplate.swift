import Foundation

/// gst-launch text kept in `pipelines/*.pipeline`: one element per line, `#` comments, `{placeholders}`.
/// Users change the chains without rebuilding; `--dump-pipeline` prints what runs.
///
/// A line `[audio]` starts a second chain, used only when the stream has an audio track: its lines are joined
/// the same way, and it usually ends in a reference to an element of the first chain (`mux.`).
/// A line `--` ends a chain without linking it to the next line, which starts another (gst-launch's space):
/// for an element whose pads the program links itself.
public struct PipelineTemplate: Sendable {
    public let name: String
    public let path: String
    public let lines: [String]
    /// The chain after `[audio]` (empty when the file has none).
    public let audioLines: [String]

    public var hasAudio: Bool { !audioLines.isEmpty }

    public init(name: String, path: String, lines: [String], audioLines: [String] = []) {
        self.name = name
        self.path = path
        self.lines = lines
        self.audioLines = audioLines
    }

    public struct NotFound: Error, CustomStringConvertible {
        public let name: String
        public let searched: [String]
        public var description: String {
            "pipeline '\(name).pipeline' not found; looked in \(searched.joined(separator: ", ")). "
                + "Set PIPCOMPOSE_PIPELINES to the folder holding pipelines/*.pipeline"
        }
    }

    /// Where the pipelines folder is looked for: $PIPCOMPOSE_PIPELINES, ./pipelines, then next to the
    /// executable and up to four folders above it (a build tree: .build/release/pipcompose).
    public static func searchPath() -> [String] {
        var dirs: [String] = []
        if let env = ProcessInfo.processInfo.environment["PIPCOMPOSE_PIPELINES"], !env.isEmpty { dirs.append(env) }
        dirs.append(FileManager.default.currentDirectoryPath + "/pipelines")
        var dir = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for _ in 0..<5 {
            dirs.append(dir.appendingPathComponent("pipelines").path)
            dirs.append(dir.appendingPathComponent("share/pipcompose/pipelines").path)
            dir = dir.deletingLastPathComponent()
        }
        return dirs
    }

    public static func load(_ name: String) throws -> PipelineTemplate {
        let dirs = searchPath()
        for d in dirs {
            let p = d + "/" + name + ".pipeline"
            if FileManager.default.fileExists(atPath: p) { return try load(path: p, name: name) }
        }
        throw NotFound(name: name, searched: dirs)
    }

    /// Reads a pipeline file the user wrote (`--pipeline FILE`).
    public static func load(path: String, name: String? = nil) throws -> PipelineTemplate {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GstError(element: "pipeline", message: "cannot read '\(path)'")
        }
        let text = String(decoding: data, as: UTF8.self)
        let all = text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        let split = all.firstIndex(of: "[audio]")
        let lines = Array(all[..<(split ?? all.endIndex)])
        let audio = split.map { Array(all[(all.index(after: $0))...]) } ?? []
        guard !lines.isEmpty else {
            throw GstError(element: "pipeline", message: "'\(path)' has no elements (one gst-launch element per line)")
        }
        if split != nil && audio.isEmpty {
            throw GstError(element: "pipeline", message: "'\(path)': [audio] is followed by no elements")
        }
        return PipelineTemplate(name: name ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent,
                                path: path, lines: lines, audioLines: audio)
    }

    /// The launch text with placeholders filled, with the `[audio]` chain when `audio`; an unknown placeholder
    /// is an error naming it.
    public func render(_ values: [String: String], audio: Bool = false) throws -> String {
        var out = Self.chain(lines)
        if audio && hasAudio { out += "  " + Self.chain(audioLines) }
        for (k, v) in values { out = out.replacingOccurrences(of: "{\(k)}", with: v) }
        if let r = out.range(of: #"\{[a-z_]+\}"#, options: .regularExpression) {
            throw GstError(element: "pipeline", message: "\(path): unknown placeholder \(out[r])")
        }
        return out
    }

    /// Lines joined by links, except across a `--` line.
    static func chain(_ lines: [String]) -> String {
        lines.split(separator: "--").map { $0.joined(separator: " ! ") }.joined(separator: "  ")
    }

    /// Escapes text for a double-quoted gst-launch property value.
    public static func quoted(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    /// A taginject `tags` value carrying the title, escaped for both gst-launch and GstStructure parsing.
    public static func titleTags(_ title: String) -> String {
        let inner = "title=\"" + title.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"") + "\""
        return quoted(inner)
    }
}
