import Foundation

/// What the docs say of one key of a widget type (docs/SCENE.md's tables and `pipcompose widgets` are made from it).
public struct KeyInfo: Sendable, Equatable {
    public let name: String
    /// What the value is, in a user's words: "text", "number", "list of text", "file path", "one of: fit, fill".
    public let type: String
    /// The value when the key is left out, as a user would write it; "" when the key is required.
    public let defaultValue: String
    /// Allowed values, e.g. "0...5000 pixels per second"; "" when any value of the type is allowed.
    public let range: String
    public let doc: String
    /// Also changed on a running instance (`PATCH /v1/widgets/ID`, `ctl set ID.KEY`).
    public let live: Bool
    public let required: Bool
}

/// What is wrong with a value, in words that follow its key's name.
public struct KeyProblem: Error {
    public let message: String
    public init(_ message: String) { self.message = message }
}

/// One key of a widget type: its docs, how it is read from a scene file, and, when it can change while running, how
/// it is read from a live update. Both readers share the key's checks (range, file, time zone), and paths are
/// resolved against the scene's folder in both, so a scene and an update can never disagree about a value.
public struct WidgetKey<Value: Sendable>: Sendable {
    public let info: KeyInfo
    /// The value when the key is left out.
    public let fallback: Value
    let scene: @Sendable (NodeReader, SceneContext) throws(SceneError) -> Value
    let json: @Sendable (JSONValue, SceneContext) throws(ControlError) -> Value

    public var name: String { info.name }

    /// A key of any type: `check` turns a parsed value into the final one or says what is wrong with it.
    static func make(_ name: String, type: String, fallback: Value, shown: String, range: String = "", doc: String,
                     live: Bool, required: Bool = false,
                     scene: @escaping @Sendable (NodeReader) throws(SceneError) -> Value,
                     json: @escaping @Sendable (JSONValue) throws(ControlError) -> Value,
                     check: @escaping @Sendable (Value, SceneContext) -> Result<Value, KeyProblem> = { v, _ in .success(v) })
        -> WidgetKey {
        WidgetKey(
            info: KeyInfo(name: name, type: type, defaultValue: shown, range: range, doc: doc, live: live,
                          required: required),
            fallback: fallback,
            scene: { node, context throws(SceneError) in
                switch check(try scene(node), context) {
                case .success(let v): return v
                case .failure(let problem): throw node.error(problem.message)
                }
            },
            json: { value, context throws(ControlError) in
                switch check(try json(value), context) {
                case .success(let v): return v
                case .failure(let problem): throw .unprocessable("'\(name)': \(problem.message)")
                }
            })
    }
}

extension WidgetKey where Value == String {
    /// Text; `nonEmpty` refuses "".
    public static func text(_ name: String, default fallback: String, shown: String? = nil, nonEmpty: Bool = false,
                            doc: String, live: Bool = false,
                            check: @escaping @Sendable (String) -> String? = { _ in nil }) -> WidgetKey {
        make(name, type: "text", fallback: fallback, shown: shown ?? (fallback.isEmpty ? "\"\"" : "\"\(fallback)\""),
             range: nonEmpty ? "not empty" : "", doc: doc, live: live,
             scene: { n throws(SceneError) in try n.string() },
             json: { v throws(ControlError) in try v.text(name) },
             check: { v, _ in
                 if nonEmpty && v.isEmpty { return .failure(KeyProblem("must not be empty")) }
                 return check(v).map { .failure(KeyProblem($0)) } ?? .success(v)
             })
    }

    /// A file, relative to the scene file's folder (in a scene and in a live update alike); `builtin:NAME` is one
    /// of pipcompose's own pictures. `picture` checks, in a live update, that it is a picture pipcompose can draw; a
    /// scene's missing picture is drawn as a placeholder with a warning instead, so that the scene still runs. An
    /// optional path is cleared with "".
    public static func path(_ name: String, required: Bool = false, doc: String, live: Bool = false,
                            picture: Bool = false) -> WidgetKey {
        WidgetKey(
            info: KeyInfo(name: name, type: picture ? "picture file (PNG, JPEG, SVG)" : "file path",
                          defaultValue: required ? "" : "none", range: "", doc: doc, live: live, required: required),
            fallback: "",
            scene: { n, context throws(SceneError) in
                let v = try n.string()
                guard !v.isEmpty else { throw n.error("must not be empty") }
                return context.resolve(v)
            },
            json: { v, context throws(ControlError) in
                let text = try v.text(name)
                if text.isEmpty {
                    if required { throw .bad("'\(name)' must not be empty") }
                    return ""
                }
                let path = context.resolve(text)
                if picture, !path.hasPrefix("builtin:"), let problem = context.checks.pictureProblem(path) {
                    throw .unprocessable(problem)
                }
                return path
            })
    }
}

extension WidgetKey where Value == Double {
    public static func number(_ name: String, default fallback: Double, range: ClosedRange<Double>, unit: String = "",
                              doc: String, live: Bool = false) -> WidgetKey {
        let shownRange = describe(range) + (unit.isEmpty ? "" : " " + unit)
        return make(name, type: "number", fallback: fallback, shown: describe(fallback), range: shownRange, doc: doc,
                    live: live,
                    scene: { n throws(SceneError) in try n.double(in: range, unit: unit.isEmpty ? "" : " " + unit) },
                    json: { v throws(ControlError) in
                        guard case .number(let d) = v else { throw .bad("'\(name)' must be a number, got \(v.kind)") }
                        guard d.isFinite, range.contains(d) else {
                            throw .bad("'\(name)' must be in \(shownRange), got \(d)")
                        }
                        return d
                    })
    }
}

extension WidgetKey where Value == Int? {
    /// A whole number, or nothing (`fallback` nil, shown as `shown`).
    public static func whole(_ name: String, range: ClosedRange<Int>, shown: String, doc: String,
                             live: Bool = false) -> WidgetKey {
        make(name, type: "whole number", fallback: Int?.none, shown: shown, range: "\(range.lowerBound)...\(range.upperBound)",
             doc: doc, live: live,
             scene: { n throws(SceneError) in try n.int(in: range) },
             json: { v throws(ControlError) in
                 guard case .number(let d) = v, d == d.rounded(), let i = Int(exactly: d), range.contains(i) else {
                     throw .bad("'\(name)' must be a whole number in \(range.lowerBound)...\(range.upperBound)")
                 }
                 return i
             })
    }
}

extension WidgetKey where Value == Bool {
    public static func flag(_ name: String, default fallback: Bool, doc: String, live: Bool = false) -> WidgetKey {
        make(name, type: "true or false", fallback: fallback, shown: fallback ? "true" : "false", doc: doc, live: live,
             scene: { n throws(SceneError) in try n.bool() },
             json: { v throws(ControlError) in
                 guard case .bool(let b) = v else { throw .bad("'\(name)' must be true or false, got \(v.kind)") }
                 return b
             })
    }
}

extension WidgetKey where Value == [String] {
    /// A list of text (in a scene, one text is a list of one).
    public static func texts(_ name: String, doc: String, live: Bool = false) -> WidgetKey {
        make(name, type: "list of text", fallback: [], shown: "[]", doc: doc, live: live,
             scene: { n throws(SceneError) in try n.strings() },
             json: { v throws(ControlError) in
                 guard case .array(let list) = v else { throw .bad("'\(name)' must be a list of strings, got \(v.kind)") }
                 return try list.map { item throws(ControlError) -> String in
                     guard case .string(let s) = item else {
                         throw .bad("'\(name)' must hold strings only, got \(item.kind)")
                     }
                     return s
                 }
             })
    }
}

extension WidgetKey {
    /// One of named values.
    public static func choice(_ name: String, _ choices: [(String, Value)], default fallback: String, doc: String,
                              live: Bool = false) -> WidgetKey {
        let table = Dictionary(uniqueKeysWithValues: choices)
        let names = choices.map(\.0)
        return make(name, type: "one of: " + names.joined(separator: ", "), fallback: table[fallback]!,
                    shown: fallback, doc: doc, live: live,
                    scene: { n throws(SceneError) in try n.oneOf(table) },
                    json: { v throws(ControlError) in
                        guard case .string(let s) = v, let value = table[s.lowercased()] else {
                            throw .bad("'\(name)' must be one of: \(names.joined(separator: ", "))")
                        }
                        return value
                    })
    }
}

extension JSONValue {
    /// The text of a string value, or the rule for key `name`.
    func text(_ name: String) throws(ControlError) -> String {
        guard case .string(let s) = self else { throw .bad("'\(name)' must be a string, got \(kind)") }
        return s
    }
}

/// `0...5000`, `1 or more`.
func describe(_ r: ClosedRange<Double>) -> String {
    if r.upperBound == .greatestFiniteMagnitude { return "\(describe(r.lowerBound)) or more" }
    return "\(describe(r.lowerBound))...\(describe(r.upperBound))"
}

func describe(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(v) }
