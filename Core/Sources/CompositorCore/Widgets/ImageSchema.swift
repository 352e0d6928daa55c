/// A picture (PNG, JPEG, SVG) fitted to its box.
public struct ImageConfig: WidgetConfig, Equatable {
    public var source = ""
    public var fit = ImageFit.fit

    public enum Keys {
        static let source = WidgetKey.path("source", required: true, doc: "the picture, relative to the scene's folder",
                                           live: true, picture: true)
        static let fit = WidgetKey.choice("fit", ImageFit.allCases.map { ($0.rawValue, $0) }, default: "fit",
                                          doc: "fit: all of it, letterboxed; fill: the box covered, cropped; center: "
                                          + "its own size")
    }

    public static let type = "image"
    public static let summary = "a picture (PNG, JPEG, SVG) fitted to its box"
    public static let keys = [Keys.source.info, Keys.fit.info]
    public static let placement = Placement(edge: .fill, minPixels: 16, priority: 0)

    public init() {}

    public init(scene f: SceneFields) throws(SceneError) {
        source = try f.require(Keys.source, "an image widget needs 'source' (a PNG, JPEG or SVG path)")
        fit = try f.read(Keys.fit)
    }

    /// Another picture.
    public struct Change: WidgetChange {
        public let source: String
    }

    public static func change(_ f: LiveFields) throws(ControlError) -> any WidgetChange {
        Change(source: try f.require(Keys.source))
    }
}
