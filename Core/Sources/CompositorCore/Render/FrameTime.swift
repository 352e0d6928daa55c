import Foundation

/// The moment a frame shows, injected into every widget so tests can set it instead of sleeping.
///
/// `media` is scene time: it runs while playing and stands still while paused, so animations freeze while
/// frames keep flowing. `wall` is real time, for clocks and timecodes.
public struct FrameTime: Sendable, Equatable {
    public var frame: Int64
    public var media: Double
    public var wall: Date
    /// Playback is paused: animations stand still and players show their paused glyph.
    public var paused: Bool
    /// RTSP viewers connected now: what flows back from the audience (`{viewers}` in a text widget).
    public var viewers: Int

    public init(frame: Int64 = 0, media: Double, wall: Date, paused: Bool = false, viewers: Int = 0) {
        self.frame = frame
        self.media = media
        self.wall = wall
        self.paused = paused
        self.viewers = viewers
    }
}

/// A source of wall-clock time; tests inject a fixed or stepped clock.
public protocol WallClock: Sendable {
    func now() -> Date
}

public struct SystemWallClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A wall clock that always answers the same instant.
public struct FixedWallClock: WallClock {
    public let date: Date
    public init(_ date: Date) { self.date = date }
    public func now() -> Date { date }
}
