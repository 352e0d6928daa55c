import Foundation

/// A widget whose picture comes from outside the scene: a video layer (its source, decoded by a `VideoInput`), a web
/// page (drawn by WebKit in a `PageProcess`). Its type makes the inputs that feed it, for a run and for a snapshot;
/// the session, the renditions and snapshots ask `WidgetFactory.inputTypes` for them and name no such type.
protocol InputWidget: Widget {
    associatedtype Config: WidgetConfig
    /// Its scene entry's type: a scene's widgets of this type take their picture from outside.
    static var configType: any WidgetConfig.Type { get }
    /// The inputs that feed `widgets` (every widget of this type in a run's main picture), not yet started; empty
    /// when they cannot be made (said through `context.warn`: the widgets then show their placeholder).
    static func liveInputs(for widgets: [Self], context: InputContext) -> [any SessionInput]
    /// Makes `widgets` show their picture at scene time `at` for a snapshot, waiting as long as that takes (bounded);
    /// what it returns is stopped once the frame is drawn.
    static func still(for widgets: [Self], at: Double, context: InputContext) throws -> (any SessionInput)?
    /// Shows what the widget of the same id in `main` shows (a rendition's widget follows the main picture's input,
    /// scaled to its own box); before the first frame.
    func follow(leaderIn main: Renderer)
}

extension InputWidget {
    static var configType: any WidgetConfig.Type { Config.self }
}

extension WidgetFactory {
    /// The widget types with inputs of their own: a new one is its schema, its widget (conforming to `InputWidget`),
    /// its input, and a line here.
    static var inputTypes: [any InputWidget.Type] { [VideoWidget.self, WebWidget.self] }

    /// Whether a scene entry's widget takes its picture from outside the scene (no drawing of pipcompose's own can
    /// be compared with it).
    static func takesInput(_ spec: Scene.WidgetSpec) -> Bool {
        inputTypes.contains { ObjectIdentifier($0.configType) == ObjectIdentifier(type(of: spec.config)) }
    }

    /// The inputs of every input widget of `renderer` for a run.
    static func liveInputs(of renderer: Renderer, context: InputContext) -> [any SessionInput] {
        inputTypes.flatMap { liveInputs($0, of: renderer, context: context) }
    }

    private static func liveInputs<W: InputWidget>(_ type: W.Type, of renderer: Renderer,
                                                   context: InputContext) -> [any SessionInput] {
        let widgets = renderer.widgets.compactMap { $0 as? W }
        return widgets.isEmpty ? [] : W.liveInputs(for: widgets, context: context)
    }

    /// Every input widget of `renderer` showing its picture at `at` for a snapshot; stop what is returned after drawing.
    static func stills(of renderer: Renderer, at: Double, context: InputContext) throws -> [any SessionInput] {
        var made: [any SessionInput] = []
        do {
            for type in inputTypes { if let s = try still(type, of: renderer, at: at, context: context) { made.append(s) } }
        } catch {
            made.forEach { $0.stop() }
            throw error
        }
        return made
    }

    private static func still<W: InputWidget>(_ type: W.Type, of renderer: Renderer, at: Double,
                                              context: InputContext) throws -> (any SessionInput)? {
        let widgets = renderer.widgets.compactMap { $0 as? W }
        return widgets.isEmpty ? nil : try W.still(for: widgets, at: at, context: context)
    }
}
