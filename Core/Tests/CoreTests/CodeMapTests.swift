import Foundation
import Testing

/// docs/DESIGN.md stays true to the code: every folder and file its code map ("Layout of the code") names is in the
/// repository, every type or file name the map lists is a file, a folder or a declaration in the sources, and every
/// path the rest of the page names (`Output/Topology.swift`, pipelines/rtsp-media.pipeline) is found. A move or a
/// rename that forgets the page fails here, with the names that are gone.
@Suite struct CodeMapTests {
    @Test func everyPathAndNameOfDesignsCodeMapIsInTheRepository() throws {
        let doc = try String(contentsOfFile: repositoryRoot + "/docs/DESIGN.md", encoding: .utf8)
        let repository = Repository(root: repositoryRoot)
        let check = try CodeMap.check(doc, in: repository)
        // The map was read, not skipped: it names a hundred and more folders, files and types.
        #expect(check.checked > 100, "only \(check.checked) names read from docs/DESIGN.md's code map")
        #expect(check.gone.isEmpty, "docs/DESIGN.md names what is gone: \(check.gone.joined(separator: ", "))")
    }

    @Test func aNameThatIsGoneIsReportedWithItsKind() throws {
        let repository = Repository(files: ["Sources/Compositor/Output/Encoder.swift",
                                            "Sources/Compositor/Session/LiveSession+Topology.swift",
                                            "pipelines/rtsp-media.pipeline"],
                                    sources: "struct Encoder {}\nfinal class LiveSession {}\n")
        let doc = """
            The owner queue (`LiveSession+Topology.swift`), `Output/Topology.swift`, pipelines/rtsp-media.pipeline and
            pipelines/gone.pipeline; `/v1/frame.png` is a URL.

            ## Layout of the code

            ```
            Sources/Compositor/           everything that draws
              Output/     Encoder, Decoder (Cairo)
              Session/    LiveSession (+Topology, +Gone)
            Sources/CGst, CGone           C modules
            ```
            """
        let check = try CodeMap.check(doc, in: repository, otherProjects: ["Cairo"])
        #expect(check.gone == ["Output/Topology.swift", "pipelines/gone.pipeline", "Sources/CGst", "Sources/CGone",
                               "Decoder", "Gone"])
    }
}

/// The files and folders of a repository, and the text of its sources (where a listed type is declared).
struct Repository {
    /// Paths relative to the root, folders with a trailing "/".
    var paths: [String]
    /// The names the sources declare: Swift types, extensions and functions, C typedefs.
    var declared: Set<String>
    /// Files' and folders' names without extension, and each part of one joined by "+" (LiveSession+Topology.swift).
    var stems: Set<String>

    init(files: [String], sources: String) {
        var paths = Set(files)
        for f in files {
            var parts = f.split(separator: "/").dropLast()
            while !parts.isEmpty {
                paths.insert(parts.joined(separator: "/") + "/")
                parts = parts.dropLast()
            }
        }
        self.paths = paths.sorted()
        stems = Set(paths.flatMap { p -> [Substring] in
            let last = p.split(separator: "/").last ?? Substring(p)
            return [last] + (last.split(separator: ".").first ?? last).split(separator: "+")
        }.map(String.init))
        let declarations = #"\b(?:struct|class|enum|protocol|actor|typealias|extension|func)\s+(\w+)|\}\s*(\w+);"#
        let regex = try? NSRegularExpression(pattern: declarations)
        let found = regex?.matches(in: sources, range: NSRange(sources.startIndex..., in: sources)) ?? []
        declared = Set(found.compactMap {
            (Range($0.range(at: 1), in: sources) ?? Range($0.range(at: 2), in: sources)).map { String(sources[$0]) }
        })
    }

    /// Every file under `root` but build products and git's folder; the sources are those of the two packages'
    /// targets and of the tests' shared support.
    init(root: String) {
        let skipped: Set<String> = [".build", ".build-tsan", ".git", ".swiftpm", "node_modules"]
        var files: [String] = []
        var sources = ""
        let base = URL(fileURLWithPath: root).standardizedFileURL.path
        let walker = FileManager.default.enumerator(at: URL(fileURLWithPath: root), includingPropertiesForKeys: nil)
        while let url = walker?.nextObject() as? URL {
            if skipped.contains(url.lastPathComponent) {
                walker?.skipDescendants()
                continue
            }
            let path = String(url.standardizedFileURL.path.dropFirst(base.count + 1))
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), !isFolder.boolValue else {
                continue
            }
            files.append(path)
            if ["Sources/", "Core/Sources/", "Core/Tests/TestSupport/"].contains(where: { path.hasPrefix($0) }),
               ["swift", "c", "h"].contains(url.pathExtension) {
                sources += (try? String(contentsOf: url, encoding: .utf8)) ?? ""
                sources += "\n"
            }
        }
        self.init(files: files, sources: sources)
    }

    /// Whether a path the page names is here: one with a "/" from the root (a folder's, or a Swift file's given
    /// without ".swift", too), a file's name alone anywhere (`LiveSession+Topology.swift`).
    func has(_ named: String) -> Bool {
        let name = named.hasPrefix("./") ? String(named.dropFirst(2)) : named
        let forms = [name, name.hasSuffix("/") ? name : name + "/", name + ".swift"]
        if name.contains("/") { return forms.contains { paths.contains($0) } }
        return paths.contains { p in forms.contains { p == $0 || p.hasSuffix("/" + $0) } }
    }

    /// Whether a name the map lists is a file's or folder's name (or part of one), or one the sources declare.
    func knows(_ name: String) -> Bool {
        stems.contains(name) || declared.contains(name)
    }
}

/// The check of DESIGN.md against a repository.
enum CodeMap {
    /// Words of the map that name things outside this repository (libraries, protocols, formats), not its code.
    static let otherProjects: Set<String> = ["BGRx", "Cairo", "GDBus", "GVariant", "Hummingbird", "Host", "Origin",
                                             "Pango", "PiP", "WebKit", "WxH"]

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// What is gone (paths first, in the page's order, then the names the map lists), and how many were checked.
    static func check(_ doc: String, in repository: Repository, otherProjects: Set<String> = otherProjects)
        throws -> (gone: [String], checked: Int) {
        let lines = doc.components(separatedBy: "\n")
        guard let heading = lines.firstIndex(of: "## Layout of the code"),
              let open = lines[heading...].firstIndex(where: { $0.hasPrefix("```") }),
              let close = lines[(open + 1)...].firstIndex(where: { $0.hasPrefix("```") }) else {
            throw Failure(description: "docs/DESIGN.md has no code map: a fenced block under \"## Layout of the code\"")
        }
        let map = Array(lines[(open + 1)..<close])
        let prose = (Array(lines[..<open]) + Array(lines[(close + 1)...])).joined(separator: "\n")
        var paths = pathsNamed(inProse: prose)
        var names: [String] = []
        var top = ""
        for line in map {
            let (named, rest) = pathsNamed(inMapLine: line, top: &top)
            paths += named
            names += matches(of: #"\b[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*\b"#, in: rest)
        }
        var seen = Set<String>()
        paths = paths.filter { seen.insert($0).inserted }
        names = names.filter { seen.insert($0).inserted && !otherProjects.contains($0) }
        let gone = paths.filter { !repository.has($0) } + names.filter { !repository.knows($0) }
        return (gone, paths.count + names.count)
    }

    /// Paths in the page's text: words in backquotes with a "/" or a file's extension (not a URL's path, "/v1/…"),
    /// and paths with an extension written plainly (pipelines/rtsp-media.pipeline).
    static func pathsNamed(inProse text: String) -> [String] {
        let ext = #"\.(swift|c|h|md|sh|py|pipeline|html|yaml|json)"#
        var paths: [String] = []
        for quoted in matches(of: "`[^`\n]+`", in: text) {
            for word in quoted.dropFirst().dropLast().split(separator: " ").map(String.init)
            where !word.hasPrefix("/") && !word.contains("://") && !word.hasPrefix("-")
                && (word.contains("/") || word.range(of: ext + "$", options: .regularExpression) != nil) {
                paths.append(word)
            }
        }
        let unquoted = text.replacingOccurrences(of: "`[^`\n]+`", with: "", options: .regularExpression)
        paths += matches(of: #"(?<![\w/.])(?:[\w+-]+/)+[\w+.-]+"# + ext + #"\b"#, in: unquoted)
        return paths
    }

    /// The paths a line of the map starts with, and the rest of the line (what it lists): `Sources/CGst, CPango,
    /// CRsvg` names three folders of Sources/; an indented folder (`  Output/`, `  Render/, Measure/`) is one of
    /// `top`, the last top folder that ends with "/".
    static func pathsNamed(inMapLine line: String, top: inout String) -> (paths: [String], rest: String) {
        if !line.hasPrefix(" "), let head = line.components(separatedBy: "  ").first, !head.isEmpty {
            let parts = head.components(separatedBy: ", ")
            let parent = parts[0].split(separator: "/").dropLast().joined(separator: "/")
            if parts[0].hasSuffix("/") { top = parts[0] }
            let siblings = parts.dropFirst().map { parent.isEmpty ? $0 : parent + "/" + $0 }
            return ([parts[0]] + siblings, String(line.dropFirst(head.count)))
        }
        guard let folders = matches(of: #"^  (?:[A-Za-z]+/(?:, )?)+(?= )"#, in: line).first else { return ([], line) }
        let paths = folders.split(separator: ",").map { top + $0.trimmingCharacters(in: .whitespaces) }
        return (paths, String(line.dropFirst(folders.count)))
    }

    static func matches(of pattern: String, in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range, in: text).map { String(text[$0]) }
        }
    }
}
