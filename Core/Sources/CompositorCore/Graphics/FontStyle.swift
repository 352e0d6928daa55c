/// How text looks: family, weight, style. The size is set per layout, in pixels, from the widget's box.
public struct FontStyle: Equatable, Sendable {
    public var family: String
    public var bold: Bool
    public var italic: Bool

    public init(family: String = FontStyle.defaultFamily, bold: Bool = false, italic: Bool = false) {
        self.family = family
        self.bold = bold
        self.italic = italic
    }

    /// Noto Sans first, with Noto CJK and emoji fonts reached through fontconfig's fallback.
    public static let defaultFamily = "Noto Sans, Noto Sans CJK JP, DejaVu Sans"
}

/// Where lines of text sit in their box, across it.
public enum TextAlignment: Sendable { case leading, center, trailing }
