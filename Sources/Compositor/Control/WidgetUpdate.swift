import Foundation

/// Turns a JSON object of widget properties into a change applied on the render thread, after checking
/// every property against the widget's type: unknown ids, unknown properties and wrong types are refused
/// before anything changes.
public enum WidgetUpdate {
    /// Properties each widget type takes.
    public static let properties: [String: [String]] = [
        "ticker": ["items", "text"],
        "nowplaying": ["title", "artist", "album", "artwork", "duration", "position", "playing"],
        "image": ["source"],
        "clock": ["timezone"],
        "text": ["text"],
        "timecode": [],
        "video": ["source", "opacity"],
    ]

    /// A video layer's new `source`, checked as the scene checks it (a path relative to the scene file's folder).
    public static func videoSource(scene: Scene, body: [String: JSONValue]) throws(ControlError) -> VideoSource? {
        guard let v = body["source"] else { return nil }
        guard case .string(let text) = v else { throw .bad("'source' must be a string, got \(v.kind)") }
        let folder = scene.source == "demo" ? "." : (scene.source as NSString).deletingLastPathComponent
        do { return try VideoSource.parse(text, directory: folder.isEmpty ? "." : folder) } catch {
            throw .unprocessable(error.description)
        }
    }

    static func typeName(_ kind: Scene.WidgetSpec.Kind) -> String {
        switch kind {
        case .clock: "clock"
        case .ticker: "ticker"
        case .nowPlaying: "nowplaying"
        case .image: "image"
        case .text: "text"
        case .timecode: "timecode"
        case .video: "video"
        }
    }

    /// Checks `body` for widget `id` of `scene` (the scene as loaded: which widgets exist and their types; no
    /// widget's live state is read here, off the render thread); returns the change to run on the render thread.
    public static func prepare(scene: Scene, id: String,
                               body: [String: JSONValue]) throws(ControlError) -> (Renderer, Double) -> Void {
        guard let spec = scene.widgets.first(where: { $0.id == id }) else {
            throw .notFound("no widget '\(id)'; widgets: \(scene.widgets.map(\.id).joined(separator: ", "))")
        }
        let type = typeName(spec.kind)
        let allowed = properties[type] ?? []
        if body.isEmpty { throw .bad("no properties given; a \(type) widget takes: \(allowed.joined(separator: ", "))") }
        for key in body.keys where !allowed.contains(key) {
            throw .bad("widget '\(id)' (\(type)) has no property '\(key)'"
                       + (allowed.isEmpty ? "; it takes none" : "; it takes: \(allowed.joined(separator: ", "))"))
        }
        func string(_ k: String) throws(ControlError) -> String? {
            guard let v = body[k] else { return nil }
            guard case .string(let s) = v else { throw .bad("'\(k)' must be a string, got \(v.kind)") }
            return s
        }
        func number(_ k: String, _ range: ClosedRange<Double>) throws(ControlError) -> Double? {
            guard let v = body[k] else { return nil }
            guard case .number(let d) = v else { throw .bad("'\(k)' must be a number, got \(v.kind)") }
            guard d.isFinite, range.contains(d) else {
                throw .bad("'\(k)' must be in \(Int(range.lowerBound))...\(Int(range.upperBound)), got \(d)")
            }
            return d
        }
        func bool(_ k: String) throws(ControlError) -> Bool? {
            guard let v = body[k] else { return nil }
            guard case .bool(let b) = v else { throw .bad("'\(k)' must be true or false, got \(v.kind)") }
            return b
        }
        switch spec.kind {
        case .ticker:
            var items: [String]?
            if let raw = body["items"] {
                guard case .array(let list) = raw else { throw .bad("'items' must be a list of strings, got \(raw.kind)") }
                items = try list.map { v throws(ControlError) -> String in
                    guard case .string(let s) = v else { throw .bad("'items' must hold strings only, got \(v.kind)") }
                    return s
                }
            }
            if let text = try string("text") {
                items = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            }
            let new = items ?? []
            return { renderer, media in (renderer.widget(id: id) as? TickerWidget)?.replaceItems(new, at: media) }
        case .nowPlaying:
            let title = try string("title"), artist = try string("artist"), album = try string("album")
            var artwork: String??
            if let v = try string("artwork") {
                if !v.isEmpty && !v.hasPrefix("builtin:") {
                    do { _ = try Picture.load(path: v) } catch { throw .unprocessable("\(error)") }
                }
                artwork = .some(v.isEmpty ? nil : v)
            }
            let duration = try number("duration", 0...(86400 * 7))
            let position = try number("position", 0...(86400 * 7))
            let playing = try bool("playing")
            // Merged into the card's state on the render thread, which alone reads and writes it.
            return { renderer, media in
                guard let w = renderer.widget(id: id) as? NowPlayingWidget else { return }
                var next = w.config
                if let title { next.title = title }
                if let artist { next.artist = artist }
                if let album { next.album = album }
                if let artwork { next.artwork = artwork }
                if let duration { next.duration = duration }
                if let playing { next.playing = playing }
                // Without a new position, keep playing from where the card is now.
                next.position = position ?? w.position(at: media)
                if next.duration > 0 { next.position = min(next.position, next.duration) }
                w.update(next, at: media)
            }
        case .image:
            guard let path = try string("source") else { throw .bad("'source' is required") }
            do { _ = try Picture.load(path: path) } catch { throw .unprocessable("\(error)") }
            return { renderer, _ in (renderer.widget(id: id) as? ImageWidget)?.setSource(path) }
        case .clock:
            guard let zone = try string("timezone") else { throw .bad("'timezone' is required") }
            guard TimeZone(identifier: zone) != nil else {
                throw .unprocessable("unknown timezone '\(zone)'; expected an IANA name such as Europe/Paris")
            }
            return { renderer, _ in (renderer.widget(id: id) as? ClockWidget)?.setTimezone(zone) }
        case .text:
            guard let text = try string("text") else { throw .bad("'text' is required") }
            return { renderer, _ in (renderer.widget(id: id) as? TextWidget)?.setText(text) }
        case .timecode:
            throw .bad("a timecode widget has no properties to change")
        case .video:
            let source = try videoSource(scene: scene, body: body)
            let opacity = try number("opacity", 0...1)
            return { renderer, _ in (renderer.widget(id: id) as? VideoWidget)?.update(source: source, opacity: opacity) }
        }
    }
}

