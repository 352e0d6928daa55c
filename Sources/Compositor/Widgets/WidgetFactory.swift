/// Builds the widget for a scene entry, through its configuration (`WidgetMaking`, in each widget's file).
public enum WidgetFactory {
    public static func make(_ spec: Scene.WidgetSpec, warn: @escaping (String) -> Void) -> any Widget {
        guard let maker = spec.config as? any WidgetMaking else {
            preconditionFailure("widget type '\(spec.type)' has a schema but no widget: conform its configuration to WidgetMaking")
        }
        return maker.make(id: spec.id, style: spec.style, warn: warn)
    }
}
