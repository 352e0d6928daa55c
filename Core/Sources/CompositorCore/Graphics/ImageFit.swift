/// How an image fills its box.
public enum ImageFit: String, Sendable, CaseIterable {
    /// Whole image visible, letterboxed.
    case fit
    /// Box covered, image cropped.
    case fill
    /// Natural size (scaled down only when larger than the box), centered.
    case center
}
