/// The ticker: items flowing right to left in a loop, in one line.
public struct TickerConfig: WidgetConfig, Equatable {
    public var items: [String] = []
    public var separator = Keys.separator.fallback
    /// Pixels per second in a picture whose short side is 720; scales with the picture.
    public var speed = Keys.speed.fallback

    public enum Keys {
        static let items = WidgetKey.texts("items", doc: "the items, in order; the loop on screen finishes before "
                                           + "new items start (items that change again before then replace the ones "
                                           + "waiting: the newest come next, nothing queues)", live: true)
        static let text = WidgetKey.text("text", default: "", doc: "live only: the items as lines of one text "
                                         + "(what a file feed or `ctl set memo.text` sends)", live: true)
        static let separator = WidgetKey.text("separator", default: "   •   ", doc: "drawn between two items")
        static let speed = WidgetKey.number("speed", default: 120, range: 0...5000, unit: "pixels per second",
                                            doc: "at a 720-pixel short side; scales with the picture")
    }

    public static let type = "ticker"
    public static let summary = "items flowing right to left in one line"
    public static let keys = [Keys.items.info, Keys.text.info, Keys.separator.info, Keys.speed.info]
    public static let placement = Placement(edge: .bottom, size: 0.1, minPixels: 14, maxPixels: 110, priority: 2)

    public init() {}

    public init(scene f: SceneFields) throws(SceneError) {
        if let node = f.node("text") { throw node.error("'text' is for live updates; a scene lists 'items'") }
        items = try f.read(Keys.items)
        separator = try f.read(Keys.separator)
        speed = try f.read(Keys.speed)
    }

    /// The items that follow the loop now on screen.
    public struct Change: WidgetChange {
        public let items: [String]
    }

    public static func change(_ f: LiveFields) throws(ControlError) -> any WidgetChange {
        var items = try f.value(Keys.items)
        if let text = try f.value(Keys.text) {
            items = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        }
        return Change(items: items ?? [])
    }
}
