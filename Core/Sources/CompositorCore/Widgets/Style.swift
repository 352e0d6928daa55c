/// How a widget looks; every length is in pixels of a picture whose short side is 720, scaled with it.
public struct Style: Equatable, Sendable {
    public var font: FontStyle = FontStyle()
    public var color: Color = .white
    /// Secondary text (artist, album, date line).
    public var secondaryColor: Color = Color(red: 0.8, green: 0.82, blue: 0.86)
    /// Progress bars, separators.
    public var accent: Color = Color(red: 0.25, green: 0.62, blue: 1)
    public var background: Color? = nil
    public var border: Color? = nil
    public var padding: Double = 12
    public var cornerRadius: Double = 0
    /// Text size at 720: nil lets the widget size its text to its box.
    public var fontSize: Double? = nil

    public init() {}

    /// The default look with no padding: for widgets that fill their box edge to edge (video, web pages, the
    /// timecode strip).
    public static var edgeToEdge: Style {
        var s = Style()
        s.padding = 0
        return s
    }
}
