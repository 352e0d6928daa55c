import Foundation
import Yams

/// A data change on a render's timeline (`render --cues FILE`): at a scene time (`at: SECONDS`, the first frame at or
/// after it) or a frame (`frame: N`), widget `widget` takes the properties in `set`, as `PATCH /v1/widgets/ID` would
/// live, or its page is called (`call: update`, `data: {…}`), as `POST /v1/web/ID` would. So a recorded lower third
/// comes in on its frame, every time.
public struct Cue: Sendable, Equatable {
    public static func == (a: Cue, b: Cue) -> Bool {
        a.when == b.when && a.widget == b.widget && a.properties == b.properties && a.place == b.place
            && a.call?.name == b.call?.name && a.call?.argument == b.call?.argument
    }

    public enum When: Sendable, Equatable {
        case seconds(Double)
        case frame(Int64)
    }

    public var when: When
    public var widget: String
    /// The properties it sets (empty for a call).
    public var properties: [String: JSONValue]
    /// The page's function it calls and the argument (JSON text, or a string as it is), for a web widget.
    public var call: (name: String, argument: String?)?
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
    /// A YAML or JSON list of `{at: SECONDS | frame: N, widget: ID, set: {PROPERTY: VALUE, …}}` or
    /// `{at: …, widget: ID, call: NAME, data: VALUE}`, in any order.
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
            let m = try item.mapping(allowed: ["at", "frame", "widget", "set", "call", "data"], what: "a cue")
            let when: Cue.When
            switch (m["at"], m["frame"]) {
            case (let at?, nil): when = .seconds(try at.double(in: 0...86_400, unit: "s"))
            case (nil, let frame?): when = .frame(Int64(try frame.int(in: 0...10_368_000)))
            default: throw item.error("a cue needs one of 'at' (scene seconds) or 'frame' (a frame number)")
            }
            guard let widget = m["widget"] else { throw item.error("a cue needs 'widget': the id of the widget it changes") }
            let place = "\(file):\(item.line):\(item.column)"
            if let call = m["call"] {
                if m["set"] != nil { throw item.error("a cue has either 'set' (properties) or 'call' (a page's function), not both") }
                let name = try call.string()
                guard name.range(of: "^[A-Za-z_$][A-Za-z0-9_$]*$", options: .regularExpression) != nil else {
                    throw call.error("'call' must name a function of the page, such as update, play, next or stop")
                }
                var argument: String?
                if let data = m["data"] {
                    switch try data.json(typed: true) {
                    case .string(let text): argument = text
                    case let value: argument = value.jsonText
                    }
                }
                cues.append(Cue(when: when, widget: try widget.string(), properties: [:], call: (name, argument),
                                place: place))
                continue
            }
            if m["data"] != nil { throw item.error("'data' goes with 'call': the argument of the page's function") }
            guard let set = m["set"] else {
                throw item.error("a cue needs 'set' (the properties it changes, {text: …}) or 'call' (a web page's function)")
            }
            guard case .object(let properties) = try set.json(typed: true), !properties.isEmpty else {
                throw set.error("'set' must be a mapping of properties to their new values, e.g. {text: Hello}")
            }
            cues.append(Cue(when: when, widget: try widget.string(), properties: properties, place: place))
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
