/// The timecode strip: the frame number and time, machine-readable, for `probe` (docs/TIMECODE.md).
public struct TimecodeConfig: WidgetConfig, Equatable {
    public static let type = "timecode"
    public static let summary = "the machine-readable frame number and time `probe` reads (docs/TIMECODE.md)"
    public static let keys: [KeyInfo] = []
    public static let placement = Placement(edge: .bottom, size: 0.08, minPixels: 24, priority: 10, bleed: true)
    public static var style: Style {
        var s = Style.edgeToEdge
        s.font.family = "DejaVu Sans Mono, monospace"
        return s
    }

    public init() {}
    public init(scene f: SceneFields) throws(SceneError) {}

    /// The strip spans the full width, docked top or bottom, and runs to the picture's edges.
    public static func check(_ placement: inout Placement, at node: NodeReader) throws(SceneError) {
        let rule = "a timecode strip must span the full width: use edge top or bottom"
        if placement.float != nil { throw node.error(rule + ", not background or inset") }
        placement.bleed = true
        let edges = [placement.edge, placement.portraitEdge ?? placement.edge]
        guard edges.allSatisfy({ $0 == .top || $0 == .bottom }) else { throw node.error(rule) }
    }
}
