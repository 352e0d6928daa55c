import Foundation
import Yams

/// A data change on a render's timeline (`render --cues FILE`): at a scene time (`at: SECONDS`, the first frame at or
/// after it) or a frame (`frame: N`), widget `widget` takes the properties in `set`, as `PATCH /v1/widgets/ID` would
/// live. So a recorded lower third comes in on its frame, every time.
public struct Cue: Sendable, Equatable {
    public enum When: Sendable, Equatable {
        case seconds(Double)
        case frame(Int64)
    }

    public var when: When
    public var widget: String
    public var properties: [String: JSONValue]
    /// Where it is written, for messages: `cues.yaml:3:5`.
    public var place: String

    /// The frame it lands on at `fps`: the first one whose scene time is at or after a time.
    public func frame(fps: Int) -> Int64 {
        switch when {
        case .frame(let n): return n
        // A hair below, so 1.5 s at 30 fps is frame 45 however 1.5 × 30 rounds.
        case .seconds(let s): return Int64((s * Double(fps) - 1e-6).rounded(.up))
        }
    }
}

public enum Cues {
    /// A YAML or JSON list of `{at: SECONDS | frame: N, widget: ID, set: {PROPERTY: VALUE, …}}`, in any order.
    public static func parse(_ text: String, file: String) throws(SceneError) -> [Cue] {
        let root: Node
        do {
            guard let n = try Yams.compose(yaml: text) else {
                throw SceneError(file: file, line: 1, column: 1, path: "", message: "no cues; expected a list of "
                                 + "{at: SECONDS, widget: ID, set: {PROPERTY: VALUE}}")
            }
            root = n
        } catch let e as SceneError {
            throw e
        } catch let e as YamlError {
            throw SceneLoader.syntaxError(e, file: file)
        } catch {
            throw SceneError(file: file, line: 1, column: 1, path: "", message: "\(error)")
        }
        var cues: [Cue] = []
        for item in try NodeReader(node: root, path: "", file: file).list() {
            let m = try item.mapping(allowed: ["at", "frame", "widget", "set"], what: "a cue")
            let when: Cue.When
            switch (m["at"], m["frame"]) {
            case (let at?, nil): when = .seconds(try at.double(in: 0...86_400, unit: "s"))
            case (nil, let frame?): when = .frame(Int64(try frame.int(in: 0...10_368_000)))
            default: throw item.error("a cue needs one of 'at' (scene seconds) or 'frame' (a frame number)")
            }
            guard let widget = m["widget"] else { throw item.error("a cue needs 'widget': the id of the widget it changes") }
            guard let set = m["set"] else { throw item.error("a cue needs 'set': the properties it changes, {text: …}") }
            guard case .object(let properties) = try set.json(typed: true), !properties.isEmpty else {
                throw set.error("'set' must be a mapping of properties to their new values, e.g. {text: Hello}")
            }
            cues.append(Cue(when: when, widget: try widget.string(), properties: properties,
                            place: "\(file):\(item.line):\(item.column)"))
        }
        return cues
    }

    public static func load(path: String) throws(SceneError) -> [Cue] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SceneError(file: path, line: 1, column: 1, path: "", message: "cannot read the cues file")
        }
        return try parse(String(decoding: data, as: UTF8.self), file: path)
    }
}
