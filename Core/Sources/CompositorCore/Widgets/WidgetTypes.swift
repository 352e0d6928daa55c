/// Every widget type a scene may use, in the order the docs list them. A new type is its schema file and a line here.
public enum WidgetTypes {
    public static let all: [any WidgetConfig.Type] = [
        ClockConfig.self, TickerConfig.self, NowPlayingConfig.self, ImageConfig.self, TextConfig.self,
        TimecodeConfig.self, VideoConfig.self, WebConfig.self,
    ]

    public static var names: [String] { all.map { $0.type } }

    public static func named(_ type: String) -> (any WidgetConfig.Type)? { all.first { $0.type == type } }

    /// The keys of `type` as a Markdown table (docs/SCENE.md holds one per type between `<!-- keys:TYPE -->` and
    /// `<!-- /keys:TYPE -->`, and a test checks they agree).
    public static func markdown(_ type: any WidgetConfig.Type) -> String {
        guard !type.keys.isEmpty else { return "No keys of its own.\n" }
        var lines = ["| key | type | default | allowed | live | what |", "| --- | --- | --- | --- | --- | --- |"]
        for k in type.keys {
            let cells = [
                "`\(k.name)`", k.type, k.required ? "required" : code(k.defaultValue), k.range, k.live ? "yes" : "",
                k.doc,
            ]
            lines.append("| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `""` and plain values as code; prose defaults ("none", "the machine's") as they are.
    static func code(_ value: String) -> String {
        if value.hasPrefix("\"") || value.first?.isNumber == true || ["true", "false", "[]"].contains(value)
            || ImageFit(rawValue: value) != nil || ["left", "center", "right"].contains(value) {
            return "`\(value)`"
        }
        return value
    }

    /// `text` with each type's table put between its markers; unknown markers are left alone.
    public static func fillMarkdown(_ text: String) -> String {
        var out = text
        for type in all {
            let open = "<!-- keys:\(type.type) -->", close = "<!-- /keys:\(type.type) -->"
            guard let a = out.range(of: open), let b = out.range(of: close, range: a.upperBound..<out.endIndex) else {
                continue
            }
            out.replaceSubrange(a.upperBound..<b.lowerBound, with: "\n" + markdown(type))
        }
        return out
    }
}
