import Foundation

/// Turns a JSON object of widget properties into a change applied on the render thread, after the widget's schema
/// has checked every property: unknown ids, unknown properties and wrong values are refused before anything
/// changes. Paths are taken from the scene's folder, as when the scene was read.
public enum WidgetUpdate {
    /// Checks `body` for widget `id` of `scene` (the scene as loaded: which widgets exist and their types; no
    /// widget's live state is read here, off the render thread); returns the checked change, and how to apply it on
    /// the render thread.
    public static func prepare(scene: Scene, id: String, body: [String: JSONValue])
        throws(ControlError) -> (change: any WidgetChange, apply: (Renderer, Double) -> Void) {
        guard let spec = scene.widgets.first(where: { $0.id == id }) else {
            throw .notFound("no widget '\(id)'; widgets: \(scene.widgets.map(\.id).joined(separator: ", "))")
        }
        let schema = type(of: spec.config)
        let allowed = schema.liveKeys
        if body.isEmpty {
            throw .bad("no properties given; a \(schema.type) widget takes: \(allowed.joined(separator: ", "))")
        }
        for key in body.keys.sorted() where !allowed.contains(key) {
            let near = NearestName.to(key, in: allowed).map { " (did you mean '\($0)'?)" } ?? ""
            throw .bad("widget '\(id)' (\(schema.type)) has no property '\(key)'\(near)"
                       + (allowed.isEmpty ? "; it takes none" : "; it takes: \(allowed.joined(separator: ", "))"))
        }
        let context = SceneContext(folder: scene.folder, checks: MediaChecksLive())
        let change = try schema.change(LiveFields(body: body, context: context))
        return (change, { renderer, media in renderer.widget(id: id)?.apply(change, at: media) })
    }
}
