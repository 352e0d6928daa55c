import Foundation

/// A widget type's schema, held by its configuration (`ClockConfig`, `TickerConfig`, …): its name, its keys, how a
/// scene entry is read and a live update checked, where it goes and how it looks by default. One file per type
/// holds all of it; the scene loader, the live update path and the docs are generic over `WidgetTypes.all`. How it
/// is drawn is the widget's own (Compositor/Widgets), made from this configuration.
public protocol WidgetConfig: Sendable {
    /// The `type:` of a scene entry.
    static var type: String { get }
    /// One line on what the widget shows, for the docs.
    static var summary: String { get }
    /// Every key of its own (`id`, `type`, `place`, `style` and `z` are every widget's).
    static var keys: [KeyInfo] { get }
    /// Where it goes when the scene does not say.
    static var placement: Placement { get }
    /// How it looks when the scene does not say.
    static var style: Style { get }

    /// Reads a scene entry's own keys.
    init(scene fields: SceneFields) throws(SceneError)
    /// Checks a live update's properties (only `live` keys reach it); the change is applied by the widget on the
    /// render thread.
    static func change(_ fields: LiveFields) throws(ControlError) -> any WidgetChange
    /// A last word on where the widget may go.
    static func check(_ placement: inout Placement, at node: NodeReader) throws(SceneError)
}

extension WidgetConfig {
    public static var style: Style { Style() }
    public static func check(_ placement: inout Placement, at node: NodeReader) throws(SceneError) {}
    public static func change(_ fields: LiveFields) throws(ControlError) -> any WidgetChange {
        throw .bad("a \(type) widget has no properties to change")
    }
    /// The keys a live update may set.
    public static var liveKeys: [String] { keys.filter(\.live).map(\.name) }
}

/// What a live update changes in one widget, checked; the widget applies it on the render thread.
public protocol WidgetChange: Sendable {}

/// What checking a scene needs from outside the scene: its folder (relative paths) and the media checks that only
/// the rendering side can make (a picture decodes, a file holds video, a font is installed, a host resolves).
public struct SceneContext: Sendable {
    /// Relative paths in the scene are taken from here.
    public var folder: String
    public var checks: any MediaChecks

    public init(folder: String, checks: any MediaChecks = NoMediaChecks()) {
        self.folder = folder
        self.checks = checks
    }

    /// `path` made absolute against the scene's folder (`builtin:` names and absolute paths as they are; `~` is
    /// the home folder).
    public func resolve(_ path: String) -> String {
        if path.hasPrefix("builtin:") || path.hasPrefix("/") { return path }
        let expanded = (path as NSString).expandingTildeInPath
        return expanded.hasPrefix("/") ? expanded : (folder as NSString).appendingPathComponent(expanded)
    }
}

/// Checks of media that need the libraries that draw and play them.
public protocol MediaChecks: Sendable {
    /// Why `path` is not a picture pipcompose can draw (PNG, JPEG, SVG), or nil.
    func pictureProblem(_ path: String) -> String?
    /// Why the file at `uri` holds no pictures, or nil.
    func videoProblem(_ uri: String) -> String?
    /// The families in a font list that fontconfig does not have.
    func missingFonts(in family: String) -> [String]
    /// Why a web page's host name does not resolve, or nil (the system's resolver is the rendering side's: the
    /// core asks no network).
    func hostProblem(_ host: String) -> String?
}

/// No media checks: what a scene is, without asking GStreamer, Cairo or fontconfig (the core's own tests).
public struct NoMediaChecks: MediaChecks {
    public init() {}
    public func pictureProblem(_ path: String) -> String? { nil }
    public func videoProblem(_ uri: String) -> String? { nil }
    public func missingFonts(in family: String) -> [String] { [] }
    public func hostProblem(_ host: String) -> String? { nil }
}

/// A scene entry's own keys, read through their `WidgetKey`s with the entry's position for every complaint.
public struct SceneFields {
    let entries: [String: NodeReader]
    /// The widget's mapping, for complaints about a key that is missing.
    public let widget: NodeReader
    public let context: SceneContext

    /// The key's value, or nil when the scene leaves it out.
    public func value<V>(_ key: WidgetKey<V>) throws(SceneError) -> V? {
        guard let n = entries[key.name] else { return nil }
        return try key.scene(n, context)
    }

    /// The key's value, or its fallback.
    public func read<V>(_ key: WidgetKey<V>) throws(SceneError) -> V { try value(key) ?? key.fallback }

    /// A key the widget cannot do without; `hint` says what it takes.
    public func require<V>(_ key: WidgetKey<V>, _ hint: String) throws(SceneError) -> V {
        guard let v = try value(key) else { throw widget.error("a \(hint)") }
        return v
    }

    /// The entry's node for `name`, to place a complaint about a combination of keys.
    public func node(_ name: String) -> NodeReader? { entries[name] }
}

/// A live update's properties, read through the same `WidgetKey`s as the scene.
public struct LiveFields {
    let body: [String: JSONValue]
    public let context: SceneContext

    public init(body: [String: JSONValue], context: SceneContext) {
        self.body = body
        self.context = context
    }

    /// The key's new value, or nil when the update leaves it as it is.
    public func value<V>(_ key: WidgetKey<V>) throws(ControlError) -> V? {
        guard let v = body[key.name] else { return nil }
        return try key.json(v, context)
    }

    /// A property the update cannot do without.
    public func require<V>(_ key: WidgetKey<V>) throws(ControlError) -> V {
        guard let v = try value(key) else { throw .bad("'\(key.name)' is required") }
        return v
    }

    public func has(_ name: String) -> Bool { body[name] != nil }
}
