import Foundation

/// A change to the scene's widgets, run on the frame loop's thread before a frame: applied to the main picture,
/// then to every rendition. `widget` nil: it only reads the main picture's renderer (nothing to repeat elsewhere).
struct SceneChange {
    let widget: String?
    /// The properties it sets: a later change of the same widget that sets all of them makes this one moot.
    let properties: Set<String>
    let apply: (Renderer, Double) -> Void
    /// Held until this moment (a change asked for a stated frame); nil: the next frame.
    var moment: ChangeMoment? = nil
    /// Told the frame it was applied before, once it was.
    var landed: ((Int64) -> Void)? = nil

    /// Whether it applies before frame `n`, at scene time `media`.
    func isDue(frame n: Int64, media: Double) -> Bool {
        switch moment {
        case nil: true
        case .frame(let f): n >= f
        case .sceneTime(let t): media >= t - 1e-9
        }
    }
}

/// When a widget change lands (`PATCH /v1/widgets/ID` with `at`): before a frame number (the timecode strip's), or
/// before the first frame whose scene time is at or past a time.
public enum ChangeMoment: Sendable, Equatable, CustomStringConvertible {
    case frame(Int64)
    case sceneTime(Double)

    public var description: String {
        switch self {
        case .frame(let f): "frame \(f)"
        case .sceneTime(let t): "scene time \(t) s"
        }
    }
}

/// The changes made to widgets so far, for renditions made later: replayed in order, each at the scene time it was
/// first applied at, they bring a new renderer to what the others show (a ticker's items, the card's track and where
/// it was in it). Bounded: a change is dropped once a later one of the same widget sets every property it set, and
/// past `limit` the oldest go. Only used on the frame loop's thread.
struct SceneChangeLog {
    static let limit = 512
    private var entries: [(change: SceneChange, media: Double)] = []

    mutating func record(_ change: SceneChange, at media: Double) {
        guard let widget = change.widget else { return }
        entries.removeAll { $0.change.widget == widget && $0.change.properties.isSubset(of: change.properties) }
        entries.append((change, media))
        if entries.count > Self.limit { entries.removeFirst(entries.count - Self.limit) }
    }

    func replay(into renderer: Renderer) {
        for e in entries { e.change.apply(renderer, e.media) }
    }

    var count: Int { entries.count }
}
