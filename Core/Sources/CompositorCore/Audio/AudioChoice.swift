import Foundation

/// What `run --audio` (or a scene's `audio:`) asked to hear, checked before anything starts.
public enum AudioChoice: Sendable, Equatable, CustomStringConvertible {
    /// A silent stream: no audio track at all.
    case none
    /// A short tick at every whole second of the frame clock, a longer one every tenth second: the A/V sync signal.
    case ticks
    /// A continuous sine.
    case tone(hz: Double)
    /// Music: an audio file, an `.m3u` playlist or a folder of audio files (see `Playlist`), looping.
    case music(source: String)

    public struct Invalid: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }

    public var description: String {
        switch self {
        case .none: "none"
        case .ticks: "ticks"
        case .tone(let hz): "tone:\(hz.formatted())"
        case .music(let source): source
        }
    }

    public var isSilent: Bool { self == .none }

    /// `none`, `ticks`, `tone` or `tone:HZ` (20...20000); anything else names music (checked when it is loaded).
    public static func parse(_ text: String) throws(Invalid) -> AudioChoice {
        let t = text.trimmingCharacters(in: .whitespaces)
        switch t.lowercased() {
        case "none", "": return .none
        case "ticks": return .ticks
        case "tone": return .tone(hz: 440)
        default: break
        }
        if t.lowercased().hasPrefix("tone:") {
            let value = t.dropFirst(5)
            guard let hz = Double(value), hz.isFinite, (20...20_000).contains(hz) else {
                throw Invalid(description: "invalid --audio '\(text)': a tone's frequency must be 20...20000 Hz, e.g. tone:440")
            }
            return .tone(hz: hz)
        }
        return .music(source: t)
    }
}

private extension Double {
    func formatted() -> String { self == rounded() ? String(Int(self)) : String(self) }
}
