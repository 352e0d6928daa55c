/// A text, wrapped and sized to its box.
public struct TextConfig: WidgetConfig, Equatable {
    public var text = ""
    public var alignment = TextAlignment.leading
    /// At most this many lines; nil for as many as fit.
    public var maxLines: Int? = nil

    public enum Keys {
        static let text = WidgetKey.text("text", default: "", doc: "the text; {viewers} is the viewer count",
                                         live: true)
        static let align = WidgetKey.choice("align", [("left", TextAlignment.leading), ("center", .center),
                                                      ("right", .trailing)], default: "left",
                                            doc: "where lines sit across the box")
        static let lines = WidgetKey.whole("lines", range: 1...1000, shown: "as many as fit",
                                           doc: "at most this many lines, the last one ellipsized")
    }

    public static let type = "text"
    public static let summary = "a text, wrapped and sized to its box"
    public static let keys = [Keys.text.info, Keys.align.info, Keys.lines.info]
    public static let placement = Placement(edge: .top, size: 0.12, minPixels: 12, priority: 1)

    public init() {}

    public init(scene f: SceneFields) throws(SceneError) {
        text = try f.read(Keys.text)
        alignment = try f.read(Keys.align)
        maxLines = try f.read(Keys.lines)
    }

    /// A new text.
    public struct Change: WidgetChange {
        public let text: String
    }

    public static func change(_ f: LiveFields) throws(ControlError) -> any WidgetChange {
        Change(text: try f.require(Keys.text))
    }
}
