/// Builds the widget for a scene entry, through its configuration (`WidgetMaking`, in each widget's file). Its
/// warnings begin with where the scene gives it (`scene.yaml:14:5: widget 'logo': …`).
public enum WidgetFactory {
    public static func make(_ spec: Scene.WidgetSpec, warn given: @escaping (String) -> Void) -> any Widget {
        let warn: (String) -> Void = spec.origin.map { origin in { given("\(origin): \($0)") } } ?? given
        guard let maker = spec.config as? any WidgetMaking else {
            preconditionFailure("widget type '\(spec.type)' has a schema but no widget: conform its configuration to WidgetMaking")
        }
        return maker.make(id: spec.id, style: spec.style, warn: warn)
    }
}
