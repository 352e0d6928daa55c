/// What a widget looks like at a moment, as a value: equal values mean equal pixels.
///
/// A few numbers and two texts, compared field by field: the renderer compares every widget's appearance every
/// frame, and arrays of strings wrapped in `AnyHashable` (the first form of this) cost a dynamic cast per element.
public struct Appearance: Hashable, Sendable {
    public var a: Int64
    public var b: Int64
    public var c: Int64
    public var d: Int64
    public var text: String
    public var detail: String

    public init(_ a: Int64 = 0, _ b: Int64 = 0, _ c: Int64 = 0, _ d: Int64 = 0, text: String = "", detail: String = "") {
        self.a = a
        self.b = b
        self.c = c
        self.d = d
        self.text = text
        self.detail = detail
    }

    /// The look of a widget that is not drawn at this size.
    public static let hidden = Appearance(-1)
}
