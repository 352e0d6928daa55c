import Foundation
import Yams

/// Loads scene files (YAML, or JSON, which YAML reads) into a validated `Scene`.
///
/// Every error names the file, line and column and says what was expected; warnings (a font fontconfig does
/// not have) go to `warn` and the scene still loads.
public enum SceneLoader {
    static let topKeys = ["title", "size", "fps", "background", "layout", "timeline", "widgets", "audio"]
    static let widgetKeys = ["id", "type", "place", "style", "z"]
    static let placeKeys = ["edge", "size", "min", "max", "portrait", "priority", "inset", "width", "aspect", "margin"]
    static let styleKeys = ["font", "bold", "italic", "color", "secondary", "accent", "background", "border",
                            "padding", "radius", "size"]
    static let kindKeys: [String: [String]] = [
        "clock": ["format", "timezone", "date", "locale"],
        "ticker": ["items", "separator", "speed"],
        "nowplaying": ["title", "artist", "album", "artwork", "duration", "position", "playing"],
        "image": ["source", "fit"],
        "text": ["text", "align", "lines"],
        "timecode": [],
        "video": ["source", "fit", "loop", "opacity", "fallback"],
    ]

    /// Reads and parses a scene file.
    public static func load(path: String, warn: (String) -> Void = { _ in }) throws(SceneError) -> Scene {
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
        return try parse(text, file: path, baseDirectory: base, warn: warn)
    }

    /// Parses scene text; `file` is used in messages, `baseDirectory` resolves relative image paths.
    public static func parse(_ text: String, file: String, baseDirectory: String = ".",
                             warn: (String) -> Void = { _ in }) throws(SceneError) -> Scene {
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
        let resolve = { (p: String) -> String in p.hasPrefix("/") || p.hasPrefix("builtin:") ? p : (baseDirectory as NSString).appendingPathComponent(p) }

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
                let path = resolve((source as NSString).expandingTildeInPath)
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
        guard let widgetsNode = top["widgets"] else {
            throw r.error("missing 'widgets': a list of widgets (types: \(Scene.widgetTypes.joined(separator: ", ")))")
        }
        var widgets: [Scene.WidgetSpec] = []
        var ids: Set<String> = []
        for (i, w) in try widgetsNode.list().enumerated() {
            let spec = try parseWidget(w, index: i, resolve: resolve, warn: warn)
            guard ids.insert(spec.id).inserted else {
                throw w.error("duplicate widget id '\(spec.id)'; ids must be unique")
            }
            widgets.append(spec)
        }
        var scene = Scene(title: title, size: size, fps: fps, background: background, spacing: spacing,
                          widgets: widgets, timeline: timeline, source: file)
        scene.audio = audio
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

    static func parseWidget(_ w: NodeReader, index: Int, resolve: (String) -> String,
                            warn: (String) -> Void) throws(SceneError) -> Scene.WidgetSpec {
        guard case .mapping = w.node else { throw w.error("expected a widget mapping with 'type', got \(w.shown)") }
        // Read the type first, so the allowed keys can depend on it.
        let typeNode = try w.mapping(allowed: widgetKeys + kindKeys.values.flatMap { $0 }, what: "a widget")
        guard let t = typeNode["type"] else {
            throw w.error("missing 'type'; valid types: \(Scene.widgetTypes.joined(separator: ", "))")
        }
        let type = try t.string().lowercased()
        guard let extra = kindKeys[type] else {
            throw t.error("unknown widget type '\(type)'; valid types: \(Scene.widgetTypes.joined(separator: ", "))")
        }
        let m = try w.mapping(allowed: widgetKeys + extra, what: "a \(type) widget")
        let id = try m["id"]?.string() ?? "\(type)\(index + 1)"
        guard !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else {
            throw (m["id"] ?? w).error("widget id '\(id)' must be letters, digits, '-' or '_'")
        }
        // A style given in the scene changes the type's defaults (a video layer's padding stays 0 unless set).
        let style = try m["style"].map { s throws(SceneError) in try parseStyle(s, base: defaultStyle(type), warn: warn) }
            ?? defaultStyle(type)
        var placement = defaultPlacement(type)
        if let p = m["place"] { placement = try parsePlacement(p, defaults: placement) }
        if type == "timecode" {
            if placement.float != nil {
                throw (m["place"] ?? w).error("a timecode strip must span the full width: use edge top or bottom, not background or inset")
            }
            placement.bleed = true
            let edges = [placement.edge, placement.portraitEdge ?? placement.edge]
            guard edges.allSatisfy({ $0 == .top || $0 == .bottom }) else {
                throw (m["place"] ?? w).error("a timecode strip must span the full width: use edge top or bottom")
            }
        }
        let kind: Scene.WidgetSpec.Kind
        switch type {
        case "clock":
            var c = ClockWidget.Config()
            if let f = m["format"] { c.format = try nonEmpty(f) }
            if let z = m["timezone"] {
                let zone = try z.string()
                guard TimeZone(identifier: zone) != nil else {
                    throw z.error("unknown timezone '\(zone)'; expected an IANA name such as Europe/Paris or Asia/Tokyo")
                }
                c.timezone = zone
            }
            if let d = m["date"] { c.dateFormat = try nonEmpty(d) }
            if let l = m["locale"] { c.locale = try l.string() }
            kind = .clock(c)
        case "ticker":
            var c = TickerWidget.Config()
            if let i = m["items"] { c.items = try i.strings() }
            if let s = m["separator"] { c.separator = try s.string() }
            if let s = m["speed"] { c.speed = try s.double(in: 0...5000, unit: " pixels per second") }
            kind = .ticker(c)
        case "nowplaying":
            var c = NowPlayingWidget.Config()
            if let v = m["title"] { c.title = try v.string() }
            if let v = m["artist"] { c.artist = try v.string() }
            if let v = m["album"] { c.album = try v.string() }
            if let v = m["artwork"] { c.artwork = resolve(try v.string()) }
            if let v = m["duration"] { c.duration = try v.double(in: 0...(86400 * 7), unit: " seconds") }
            if let v = m["position"] { c.position = try v.double(in: 0...(86400 * 7), unit: " seconds") }
            if let v = m["playing"] { c.playing = try v.bool() }
            if c.duration > 0 && c.position > c.duration, let v = m["position"] {
                throw v.error("position \(c.position) is past the duration \(c.duration)")
            }
            kind = .nowPlaying(c)
        case "image":
            var c = ImageWidget.Config()
            guard let s = m["source"] else { throw w.error("an image widget needs 'source' (a PNG, JPEG or SVG path)") }
            c.source = resolve(try s.string())
            if let f = m["fit"] { c.fit = try f.oneOf(fitChoices) }
            kind = .image(c)
        case "video":
            var c = VideoWidget.Config()
            guard let s = m["source"] else {
                throw w.error("a video widget needs 'source': a file, a URI (rtsp://, srt://, http://, file://…) or test:PATTERN")
            }
            let raw = try s.string()
            let text = raw.contains("://") || raw == "test" || raw.hasPrefix("test:") ? raw : resolve(raw)
            do { c.source = try VideoSource.parse(text) } catch { throw s.error(error.description) }
            // A file must hold pictures: a text or a sound file named by mistake is refused here, at its line.
            if c.source.isFile, case .uri(let uri) = c.source {
                do { _ = try VideoDiscovery.firstPicture(of: uri) } catch {
                    throw s.error("'\(raw)' \(error.message); a video layer needs a video file (MP4, MKV, WebM, TS…)")
                }
            }
            if let f = m["fit"] { c.fit = try f.oneOf(fitChoices) }
            if let l = m["loop"] { c.loop = try l.bool() }
            if let o = m["opacity"] { c.opacity = try o.double(in: 0...1, unit: "") }
            if let f = m["fallback"] { c.fallback = resolve(try nonEmpty(f)) }
            kind = .video(c)
        case "text":
            var c = TextWidget.Config()
            if let v = m["text"] { c.text = try v.string() }
            if let v = m["align"] {
                c.alignment = try v.oneOf(["left": .leading, "center": .center, "right": .trailing])
            }
            if let v = m["lines"] { c.maxLines = try v.int(in: 1...1000) }
            kind = .text(c)
        default:
            kind = .timecode
        }
        let z = try m["z"]?.int(in: -1000...1000)
        return Scene.WidgetSpec(id: id, kind: kind, placement: placement, style: style, z: z)
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

    static func parseStyle(_ n: NodeReader, base: Style = Style(), warn: (String) -> Void) throws(SceneError) -> Style {
        var s = base
        let m = try n.mapping(allowed: styleKeys, what: "style")
        if let f = m["font"] {
            let family = try nonEmpty(f)
            for missing in FontCatalog.missing(in: family) {
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

    static func defaultStyle(_ type: String) -> Style {
        var s = Style()
        if type == "video" { s.padding = 0 }
        if type == "timecode" {
            s.padding = 0
            s.font.family = "DejaVu Sans Mono, monospace"
        }
        return s
    }

    /// Where a widget goes when the scene does not say.
    static func defaultPlacement(_ type: String) -> Placement {
        switch type {
        case "clock": return Placement(edge: .top, size: 0.18, minPixels: 14, priority: 3)
        case "ticker": return Placement(edge: .bottom, size: 0.1, minPixels: 14, maxPixels: 110, priority: 2)
        case "timecode": return Placement(edge: .bottom, size: 0.08, minPixels: 24, priority: 10, bleed: true)
        case "text": return Placement(edge: .top, size: 0.12, minPixels: 12, priority: 1)
        default: return Placement(edge: .fill, minPixels: 16, priority: 0)
        }
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
