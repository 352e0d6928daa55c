/// The now-playing card: title, artist, album, artwork and progress, like a media player's lock-screen card.
public struct NowPlayingConfig: WidgetConfig, Equatable {
    public var title = ""
    public var artist = ""
    public var album = ""
    public var artwork: String? = nil
    /// Track length in seconds; 0 when unknown (no progress bar).
    public var duration = 0.0
    /// Position in seconds at scene time `anchor`.
    public var position = 0.0
    public var playing = true

    public enum Keys {
        static let title = WidgetKey.text("title", default: "", doc: "the track's title", live: true)
        static let artist = WidgetKey.text("artist", default: "", doc: "its artist", live: true)
        static let album = WidgetKey.text("album", default: "", doc: "its album", live: true)
        static let artwork = WidgetKey.path("artwork", doc: "cover picture, or builtin:cover; \"\" removes it (live)",
                                            live: true, picture: true)
        static let duration = WidgetKey.number("duration", default: 0, range: 0...(86400 * 7), unit: "seconds",
                                               doc: "the track's length; 0: unknown, no progress bar", live: true)
        static let position = WidgetKey.number("position", default: 0, range: 0...(86400 * 7), unit: "seconds",
                                               doc: "where it is at scene time 0 (or when the update comes); not past the duration; "
                                               + "it advances while playing",
                                               live: true)
        static let playing = WidgetKey.flag("playing", default: true, doc: "the position moves; false shows ⏸",
                                            live: true)
    }

    public static let type = "nowplaying"
    public static let summary = "what is playing: title, artist, album, artwork, progress"
    public static let keys = [Keys.title.info, Keys.artist.info, Keys.album.info, Keys.artwork.info,
                              Keys.duration.info, Keys.position.info, Keys.playing.info]
    public static let placement = Placement(edge: .fill, minPixels: 16, priority: 0)

    public init() {}

    public init(scene f: SceneFields) throws(SceneError) {
        title = try f.read(Keys.title)
        artist = try f.read(Keys.artist)
        album = try f.read(Keys.album)
        artwork = try f.value(Keys.artwork)
        duration = try f.read(Keys.duration)
        position = try f.read(Keys.position)
        playing = try f.read(Keys.playing)
        if duration > 0 && position > duration, let node = f.node("position") {
            throw node.error("position \(position) is past the duration \(duration)")
        }
    }

    /// The card's new fields; what is nil stays. Without a new position the card plays on from where it is.
    public struct Change: WidgetChange {
        public var title, artist, album: String?
        /// `.some(nil)` removes the artwork.
        public var artwork: String??
        public var duration, position: Double?
        public var playing: Bool?
    }

    public static func change(_ f: LiveFields) throws(ControlError) -> any WidgetChange {
        var c = Change()
        c.title = try f.value(Keys.title)
        c.artist = try f.value(Keys.artist)
        c.album = try f.value(Keys.album)
        if let a = try f.value(Keys.artwork) { c.artwork = .some(a.isEmpty ? nil : a) }
        c.duration = try f.value(Keys.duration)
        c.position = try f.value(Keys.position)
        c.playing = try f.value(Keys.playing)
        return c
    }

    /// The card after `change`, with `position` where the card is now when the change gives none.
    public func applying(_ change: Change, positionNow: Double) -> NowPlayingConfig {
        var next = self
        if let t = change.title { next.title = t }
        if let a = change.artist { next.artist = a }
        if let a = change.album { next.album = a }
        if let a = change.artwork { next.artwork = a }
        if let d = change.duration { next.duration = d }
        if let p = change.playing { next.playing = p }
        next.position = change.position ?? positionNow
        if next.duration > 0 { next.position = min(next.position, next.duration) }
        return next
    }
}
