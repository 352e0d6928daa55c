/// The JSON of `GET /v1/nowplaying`: what a browser's Picture-in-Picture window shows and offers (the live page's
/// Media Session). The card's metadata (the music's title when there is no card), where the scene stands, and which
/// of the PiP controller's verbs this run can do.
public struct NowPlayingPayload: Codable, Sendable, Equatable {
    public var title: String
    public var artist: String
    public var album: String
    /// `/v1/nowplaying/artwork?v=…` while the card shows a cover (the query changes with the cover), else absent.
    public var artwork: String?
    /// The scene's play state (`ctl pause`, `ctl play`).
    public var playing: Bool
    /// Scene time, seconds.
    public var position: Double
    /// A finite scene's length (`timeline: {duration: …}`); absent for a live one, whose time range is infinite.
    public var duration: Double?
    /// `ctl skip ±15` works: a finite scene, or music to skip within.
    public var seek: Bool
    /// `ctl skip next|previous` works: the run has music (`--audio`).
    public var tracks: Bool

    public init(title: String, artist: String, album: String, artwork: String?, playing: Bool, position: Double,
                duration: Double?, seek: Bool, tracks: Bool) {
        self.title = title
        self.artist = artist
        self.album = album
        self.artwork = artwork
        self.playing = playing
        self.position = position
        self.duration = duration
        self.seek = seek
        self.tracks = tracks
    }

    /// The query that names a cover: a hash of its path, so a new cover is a new URL (browsers keep the old one
    /// otherwise) and the path itself never leaves the process.
    public static func artworkURL(for path: String) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in path.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return "/v1/nowplaying/artwork?v=" + String(h, radix: 16)
    }
}
