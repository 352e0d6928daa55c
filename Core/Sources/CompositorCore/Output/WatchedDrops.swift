/// The drops of one RTSP media's feed that count: those while a viewer plays the media. A media that is prepared
/// but not played (a client that only asked for the description, or every viewer paused) takes no frames, and
/// its feed's queue drops each one offered; nobody loses a picture there, so those drops are left out.
///
/// Fed with the feed's running drop count at each change and read with the count now.
public struct WatchedDrops {
    /// Drops while nobody played, in the periods that ended.
    private var unwatched: UInt64 = 0
    /// The feed's drop count when playing last stopped; nil while the media plays. A media starts unplayed.
    private var idleFrom: UInt64? = 0

    public init() {}

    /// Someone plays the media now.
    public var isPlaying: Bool { idleFrom == nil }

    /// The media started (true) or stopped (false) being played, with the feed's drop count at that moment.
    public mutating func playing(_ on: Bool, dropsNow: UInt64) {
        if on, let from = idleFrom {
            unwatched += dropsNow - from
            idleFrom = nil
        } else if !on && idleFrom == nil {
            idleFrom = dropsNow
        }
    }

    /// The drops that count, given the feed's drop count now.
    public func counted(dropsNow: UInt64) -> UInt64 {
        dropsNow - unwatched - (idleFrom.map { dropsNow - $0 } ?? 0)
    }
}
