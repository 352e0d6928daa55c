import Foundation
import Yams

/// Loads scene files (YAML, or JSON, which YAML reads) into a validated `Scene`.
///
/// Every error names the file, line and column and says what was expected; warnings (a font fontconfig does
/// not have) go to `warn` and the scene still loads. A widget's own keys are read by its type's schema
/// (`WidgetTypes`); `checks` are the media checks only the rendering side can make (Compositor passes its own).
public enum SceneLoader {
    static let topKeys = ["title", "size", "fps", "background", "layout", "timeline", "widgets", "audio", "renditions"]
    static let widgetKeys = ["id", "type", "place", "style", "z"]
    static let placeKeys = ["edge", "size", "min", "max", "portrait", "priority", "inset", "width", "aspect", "margin"]
    static let styleKeys = ["font", "bold", "italic", "color", "secondary", "accent", "background", "border",
                            "padding", "radius", "size"]
    /// Reads and parses a scene file.
    public static func load(path: String, checks: any MediaChecks,
                            warn: (String) -> Void = { _ in }) throws(SceneError) -> Scene {
        guard let data = FileManager.default.contents(atPath: path) else {
            let exists = FileManager.default.fileExists(atPath: path)
            throw SceneError(file: path, line: 0, column: 0, path: "",
                             message: exists ? "cannot read the file (permissions?)" : "no such file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            let (line, column) = firstInvalidUTF8(data)
            throw SceneError(file: path, line: line, column: column, path: "",
                             message: "the file is not valid UTF-8 here; save it as UTF-8")
        }
        let base = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try parse(text, file: path, baseDirectory: base, checks: checks, warn: warn)
    }

    /// Parses scene text; `file` is used in messages, `baseDirectory` resolves relative image paths.
    public static func parse(_ text: String, file: String, baseDirectory: String = ".", checks: any MediaChecks,
                             warn: (String) -> Void = { _ in }) throws(SceneError) -> Scene {
        let context = SceneContext(folder: baseDirectory, checks: checks)
        let root: Node
        do {
            guard let n = try Yams.compose(yaml: text) else {
                throw SceneError(file: file, line: 1, column: 1, path: "",
                                 message: "the scene is empty; expected a mapping with at least 'widgets'")
            }
            root = n
        } catch let e as SceneError {
            throw e
        } catch let e as YamlError {
            throw syntaxError(e, file: file)
        } catch {
            throw SceneError(file: file, line: 1, column: 1, path: "", message: "\(error)")
        }
        let r = NodeReader(node: root, path: "", file: file)
        let top = try r.mapping(allowed: topKeys, what: "the scene")
        let resolve = context.resolve

        let title = try top["title"]?.string() ?? "pipcompose"
        var size = PixelSize(width: 1280, height: 720)
        if let s = top["size"] { size = try parseSize(s) }
        let fps = try top["fps"]?.int(in: 1...120) ?? 30
        var audio = AudioChoice.none
        if let a = top["audio"] {
            let text = try a.string()
            do { audio = try AudioChoice.parse(text) } catch { throw a.error(error.description.replacingOccurrences(of: "--audio", with: "audio")) }
            // Music is named relative to the scene file, and must be there.
            if case .music(let source) = audio, !source.contains("://") {
                let path = resolve(source)
                guard FileManager.default.fileExists(atPath: path) else {
                    throw a.error("no such file or folder '\(path)'; audio takes none, ticks, tone[:HZ], an audio file, "
                                  + "an .m3u playlist or a folder of audio files")
                }
                audio = .music(source: path)
            }
        }
        let background = try top["background"].map { n throws(SceneError) in try parseBackground(n, resolve) }
            ?? .color(Color(red: 0.06, green: 0.08, blue: 0.12))
        var spacing = LayoutSpacing()
        if let l = top["layout"] {
            let m = try l.mapping(allowed: ["padding", "gap"], what: "layout")
            if let p = m["padding"] { spacing.padding = try p.double(in: 0...0.25, unit: " (fraction of the short side)") }
            if let g = m["gap"] { spacing.gap = try g.double(in: 0...0.25, unit: " (fraction of the short side)") }
        }
        var timeline = Scene.Timeline.live
        if let t = top["timeline"] {
            if case .scalar = t.node {
                let s = try t.string()
                guard s.lowercased() == "live" else {
                    throw t.error("expected 'live' or a mapping {duration: SECONDS}, got '\(s)'")
                }
            } else {
                let m = try t.mapping(allowed: ["duration"], what: "timeline")
                guard let d = m["duration"] else { throw t.error("a finite timeline needs 'duration' in seconds") }
                timeline = .finite(duration: try d.double(in: 0.1...(86400 * 365), unit: " seconds"))
            }
        }
        // More pictures of the scene, each with its own layout: ["416x234", "640x360@800"], as --rendition takes them.
        var renditions: [Rendition] = []
        if let list = top["renditions"] {
            for item in try list.list() {
                let text = try item.string()
                do { renditions.append(try Rendition.parse(text)) } catch {
                    throw item.error(error.description.replacingOccurrences(of: "--rendition", with: "rendition"))
                }
            }
            do { renditions = try Rendition.checked(renditions, main: size) } catch {
                throw list.error(error.description.replacingOccurrences(of: "--rendition", with: "rendition"))
            }
        }
        guard let widgetsNode = top["widgets"] else {
            throw r.error("missing 'widgets': a list of widgets (types: \(Scene.widgetTypes.joined(separator: ", ")))")
        }
        var widgets: [Scene.WidgetSpec] = []
        var ids: Set<String> = []
        for (i, w) in try widgetsNode.list().enumerated() {
            let spec = try parseWidget(w, index: i, context: context, warn: warn)
            guard ids.insert(spec.id).inserted else {
                throw w.error("duplicate widget id '\(spec.id)'; ids must be unique")
            }
            widgets.append(spec)
        }
        var scene = Scene(title: title, size: size, fps: fps, background: background, spacing: spacing,
                          widgets: widgets, timeline: timeline, source: file)
        scene.audio = audio
        scene.renditions = renditions
        scene.folder = baseDirectory
        return scene
    }

    static func parseSize(_ n: NodeReader) throws(SceneError) -> PixelSize {
        let size: PixelSize
        if case .mapping = n.node {
            let m = try n.mapping(allowed: ["width", "height"], what: "size")
            guard let w = m["width"], let h = m["height"] else { throw n.error("size needs width and height") }
            size = PixelSize(width: try w.int(in: Int.min...Int.max), height: try h.int(in: Int.min...Int.max))
        } else {
            let text = try n.string()
            do { return try RenderSize.parse(text) } catch { throw n.error(error.description) }
        }
        do { return try RenderSize.check(size) } catch { throw n.error(error.description) }
    }

    static func parseBackground(_ n: NodeReader, _ resolve: (String) -> String) throws(SceneError) -> Scene.Background {
        if case .scalar = n.node { return .color(try n.color()) }
        let m = try n.mapping(allowed: ["color", "gradient", "angle", "image", "fit"], what: "background")
        if let g = m["gradient"] {
            var stops: [Color] = []
            for c in try g.list() { stops.append(try c.color()) }
            guard stops.count >= 2 else { throw g.error("a gradient needs at least 2 colours") }
            return .gradient(stops: stops, angle: try m["angle"]?.double(in: -360...360, unit: " degrees") ?? 90)
        }
        let color = try m["color"]?.color() ?? .black
        if let i = m["image"] {
            let fit = try m["fit"]?.oneOf(fitChoices) ?? .fill
            return .image(path: resolve(try i.string()), fit: fit, fallback: color)
        }
        guard m["color"] != nil else { throw n.error("expected 'color', 'gradient' or 'image'") }
        return .color(color)
    }

    static let fitChoices: [String: ImageFit] = Dictionary(uniqueKeysWithValues: ImageFit.allCases.map { ($0.rawValue, $0) })

    static func parseWidget(_ w: NodeReader, index: Int, context: SceneContext,
                            warn: (String) -> Void) throws(SceneError) -> Scene.WidgetSpec {
        guard case .mapping = w.node else { throw w.error("expected a widget mapping with 'type', got \(w.shown)") }
        // Read the type first, so the allowed keys depend on it.
        guard let t = w.entry("type") else {
            throw w.error("missing 'type'; valid types: \(Scene.widgetTypes.joined(separator: ", "))")
        }
        let type = try t.string().lowercased()
        guard let schema = WidgetTypes.named(type) else {
            throw t.error("unknown widget type '\(type)'; valid types: \(Scene.widgetTypes.joined(separator: ", "))")
        }
        let m = try w.mapping(allowed: widgetKeys + schema.keys.map(\.name), what: "a \(type) widget") { key in
            if styleKeys.contains(key) { return "'\(key)' belongs under 'style:'" }
            if placeKeys.contains(key) { return "'\(key)' belongs under 'place:'" }
            let others = WidgetTypes.all.filter { $0.keys.contains { $0.name == key } }.map { $0.type }
            return others.isEmpty ? nil : "'\(key)' is a key of \(others.joined(separator: ", ")) widgets"
        }
        let id = try m["id"]?.string() ?? "\(type)\(index + 1)"
        guard !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw (m["id"] ?? w).error("widget id '\(id)' must be letters, digits, '-' or '_'")
        }
        // A style given in the scene changes the type's defaults (a video layer's padding stays 0 unless set).
        let style = try m["style"].map { s throws(SceneError) in
            try parseStyle(s, base: schema.style, checks: context.checks, warn: warn)
        } ?? schema.style
        var placement = schema.placement
        if let p = m["place"] { placement = try parsePlacement(p, defaults: placement) }
        try schema.check(&placement, at: m["place"] ?? w)
        let own = m.filter { !widgetKeys.contains($0.key) }
        let config = try schema.init(scene: SceneFields(entries: own, widget: w, context: context))
        let z = try m["z"]?.int(in: -1000...1000)
        return Scene.WidgetSpec(id: id, config: config, placement: placement, style: style, z: z,
                                origin: "\(w.file):\(w.line):\(w.column)")
    }

    static func nonEmpty(_ n: NodeReader) throws(SceneError) -> String {
        let s = try n.string()
        guard !s.isEmpty else { throw n.error("must not be empty") }
        return s
    }

    static let edgeChoices: [String: Placement.Edge] =
        Dictionary(uniqueKeysWithValues: Placement.Edge.allCases.map { ($0.rawValue, $0) })

    static let anchorChoices: [String: Placement.Inset.Anchor] =
        Dictionary(uniqueKeysWithValues: Placement.Inset.Anchor.allCases.map { ($0.rawValue, $0) })

    static func parsePlacement(_ n: NodeReader, defaults: Placement) throws(SceneError) -> Placement {
        var p = defaults
        if case .scalar = n.node {
            let word = try n.string().lowercased()
            if word == "background" {
                p.float = .background
                return p
            }
            guard let edge = edgeChoices[word] else {
                throw n.error("'\(word)' is not one of: background, \(edgeChoices.keys.sorted().joined(separator: ", ")); "
                              + "or a mapping with 'edge' (docked) or 'inset' (floating)")
            }
            p.edge = edge
            return p
        }
        let m = try n.mapping(allowed: placeKeys, what: "place")
        if let i = m["inset"] {
            for key in ["edge", "size", "max"] where m[key] != nil {
                throw m[key]!.error("an inset floats over the picture; '\(key)' belongs to a docked widget (use inset, width, aspect, margin)")
            }
            p.float = .inset(try parseInset(m, anchor: i, defaults: Placement.Inset(anchor: .bottomRight)))
            if let s = m["min"] { p.minPixels = try s.double(in: 1...4320, unit: " pixels") }
            if let s = m["priority"] { p.priority = try s.int(in: -1000...1000) }
            if let o = m["portrait"] {
                guard case .inset(let landscape) = p.float else { return p }
                let pm = try o.mapping(allowed: ["inset", "width", "aspect", "margin"], what: "place.portrait")
                p.portraitInset = try parseInset(pm, anchor: pm["inset"], defaults: landscape)
            }
            return p
        }
        for key in ["width", "aspect", "margin"] where m[key] != nil {
            throw m[key]!.error("'\(key)' belongs to an inset; add 'inset: top-left|top|top-right|left|center|right|bottom-left|bottom|bottom-right'")
        }
        if let e = m["edge"] { p.edge = try e.oneOf(edgeChoices) }
        if let s = m["size"] { p.size = try s.double(in: 0.01...1, unit: " (fraction of the picture)") }
        if let s = m["min"] { p.minPixels = try s.double(in: 1...4320, unit: " pixels") }
        if let s = m["max"] { p.maxPixels = try s.double(in: 1...8640, unit: " pixels at 720") }
        if let s = m["priority"] { p.priority = try s.int(in: -1000...1000) }
        if let o = m["portrait"] {
            if case .scalar = o.node {
                p.portraitEdge = try o.oneOf(edgeChoices)
            } else {
                let pm = try o.mapping(allowed: ["edge", "size"], what: "place.portrait")
                if let e = pm["edge"] { p.portraitEdge = try e.oneOf(edgeChoices) }
                if let s = pm["size"] { p.portraitSize = try s.double(in: 0.01...1, unit: " (fraction of the picture)") }
            }
        }
        if let max = p.maxPixels, max < p.minPixels, let mx = m["max"] {
            throw mx.error("max (\(max)) is smaller than min (\(p.minPixels))")
        }
        return p
    }

    /// `inset: ANCHOR`, `width` (fraction of the picture's width), `aspect` (`16:9`, `4/3` or a number), `margin`.
    static func parseInset(_ m: [String: NodeReader], anchor: NodeReader?,
                           defaults: Placement.Inset) throws(SceneError) -> Placement.Inset {
        var inset = defaults
        if let a = anchor { inset.anchor = try a.oneOf(anchorChoices) }
        if let w = m["width"] { inset.width = try w.double(in: 0.01...1, unit: " (fraction of the picture's width)") }
        if let a = m["aspect"] { inset.aspect = try parseAspect(a) }
        if let g = m["margin"] { inset.margin = try g.double(in: 0...0.5, unit: " (fraction of the picture's short side)") }
        return inset
    }

    static func parseAspect(_ n: NodeReader) throws(SceneError) -> Double {
        let text = try n.string()
        let parts = text.split(whereSeparator: { $0 == ":" || $0 == "/" })
        let value: Double? = parts.count == 2
            ? Double(parts[0]).flatMap { a in Double(parts[1]).flatMap { b in b > 0 ? a / b : nil } }
            : Double(text)
        guard let value, value.isFinite, (0.1...10).contains(value) else {
            throw n.error("expected an aspect ratio such as 16:9, 4/3 or 1.5 (between 0.1 and 10), got '\(text)'")
        }
        return value
    }

    static func parseStyle(_ n: NodeReader, base: Style = Style(), checks: any MediaChecks,
                           warn: (String) -> Void) throws(SceneError) -> Style {
        var s = base
        let m = try n.mapping(allowed: styleKeys, what: "style")
        if let f = m["font"] {
            let family = try nonEmpty(f)
            for missing in checks.missingFonts(in: family) {
                warn("\(n.file):\(f.line):\(f.column): warning: font '\(missing)' is not installed; "
                     + "using fallback fonts (see `fc-list : family`)")
            }
            // Keep the CJK and emoji fallbacks behind the user's choice.
            s.font.family = family + ", " + FontStyle.defaultFamily
        }
        if let v = m["bold"] { s.font.bold = try v.bool() }
        if let v = m["italic"] { s.font.italic = try v.bool() }
        if let v = m["color"] { s.color = try v.color() }
        if let v = m["secondary"] { s.secondaryColor = try v.color() }
        if let v = m["accent"] { s.accent = try v.color() }
        if let v = m["background"] { s.background = try v.color() }
        if let v = m["border"] { s.border = try v.color() }
        if let v = m["padding"] { s.padding = try v.double(in: 0...500, unit: " pixels at 720") }
        if let v = m["radius"] { s.cornerRadius = try v.double(in: 0...1000, unit: " pixels at 720") }
        if let v = m["size"] { s.fontSize = try v.double(in: 1...1000, unit: " pixels at 720") }
        return s
    }

    static func syntaxError(_ e: YamlError, file: String) -> SceneError {
        switch e {
        case let .scanner(context, problem, mark, _), let .parser(context, problem, mark, _),
             let .composer(context, problem, mark, _):
            var message = "syntax error: \(problem)"
            if let context { message += " (\(context.text) at line \(context.mark.line), column \(context.mark.column))" }
            return SceneError(file: file, line: mark.line, column: mark.column, path: "", message: message + hint(problem))
        case let .reader(problem, offset, _, yaml):
            let (line, column) = offset.map { lineColumn(of: $0, in: yaml) } ?? (1, 1)
            return SceneError(file: file, line: line, column: column, path: "", message: "unreadable text: \(problem)")
        case let .duplicatedKeysInMapping(duplicates, context):
            return SceneError(file: file, line: context.mark.line, column: context.mark.column, path: "",
                              message: "duplicate keys: \(duplicates.joined(separator: ", "))")
        default:
            return SceneError(file: file, line: 1, column: 1, path: "", message: "\(e)")
        }
    }

    /// Says what was expected for libyaml's terse problems.
    static func hint(_ problem: String) -> String {
        if problem.contains("mapping values are not allowed") {
            return "; expected a new line before this key, or quotes around a value containing ': '"
        }
        if problem.contains("could not find expected ':'") { return "; expected 'key: value'" }
        if problem.contains("did not find expected key") { return "; expected a key at this indentation" }
        if problem.contains("found character that cannot start any token") {
            return "; tabs are not allowed for indentation, use spaces"
        }
        if problem.contains("did not find expected ',' or ']'") { return "; expected ',' or ']' to continue the list" }
        if problem.contains("did not find expected ',' or '}'") { return "; expected ',' or '}' to continue the mapping" }
        return ""
    }

    static func lineColumn(of offset: Int, in text: String) -> (Int, Int) {
        var line = 1, column = 1
        for (i, c) in text.utf8.enumerated() {
            if i >= offset { break }
            if c == 0x0A { line += 1; column = 1 } else if c & 0xC0 != 0x80 { column += 1 }
        }
        return (line, column)
    }

    /// Line and column of the first byte that breaks UTF-8.
    static func firstInvalidUTF8(_ data: Data) -> (Int, Int) {
        let bytes = [UInt8](data)
        var line = 1, column = 1, i = 0
        while i < bytes.count {
            let b = bytes[i]
            let len: Int
            if b < 0x80 { len = 1 } else if b & 0xE0 == 0xC0 { len = 2 } else if b & 0xF0 == 0xE0 { len = 3 }
            else if b & 0xF8 == 0xF0 { len = 4 } else { return (line, column) }
            if i + len > bytes.count { return (line, column) }
            let seq = Array(bytes[i..<(i + len)])
            if String(bytes: seq, encoding: .utf8) == nil { return (line, column) }
            if b == 0x0A { line += 1; column = 1 } else { column += 1 }
            i += len
        }
        return (line, column)
    }
}
