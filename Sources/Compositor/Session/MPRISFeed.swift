import Foundation

/// Now-playing from a media player over D-Bus (MPRIS 2): the card follows the player's track, state and
/// position. The player is polled twice a second (MPRIS players do not signal position changes); the card is
/// told only what changed, and the position only when it moved away from where the card would be anyway
/// (a seek), so the progress bar runs smoothly on its own between polls.
///
/// `@unchecked Sendable`: its state is touched only on its own serial poll queue; `stop()` cancels the timer there.
public final class MPRISFeed: @unchecked Sendable {
    public static let prefix = "org.mpris.MediaPlayer2."
    static let objectPath = "/org/mpris/MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"

    /// What a player says, in the card's terms.
    public struct Track: Equatable, Sendable {
        public var title = ""
        public var artist = ""
        public var album = ""
        public var artwork: String?
        public var duration = 0.0
        public var position = 0.0
        public var playing = false
    }

    let session: LiveSession
    let bus: SessionBus
    let widgetIDs: [String]
    /// A player's name without the MPRIS prefix (`vlc`, `spotify`); nil follows the first player there.
    let wanted: String?
    private let queue = DispatchQueue(label: "mpris-feed")
    private var timer: DispatchSourceTimer?
    private var player: String?
    private var last: Track?
    private var lastSent = Date()

    /// Nil when the scene has no now-playing card or no session bus is there.
    public static func start(session: LiveSession, player: String?, log: @escaping @Sendable (String) -> Void) -> MPRISFeed? {
        let ids = session.renderer.scene.widgets.compactMap { w -> String? in
            if w.config is NowPlayingConfig { return w.id }
            return nil
        }
        guard !ids.isEmpty else { return nil }
        do {
            guard let bus = try SessionBus.connectIfPresent() else {
                if player != nil { log("warning: --mpris-player given but no D-Bus session bus is there") }
                return nil
            }
            let feed = MPRISFeed(session: session, bus: bus, widgetIDs: ids, player: player)
            feed.run()
            log("mpris: watching the session bus for \(player.map { prefix + $0 } ?? "a media player")")
            return feed
        } catch {
            log("warning: no now-playing from media players: \(error)")
            return nil
        }
    }

    init(session: LiveSession, bus: SessionBus, widgetIDs: [String], player: String?) {
        self.session = session
        self.bus = bus
        self.widgetIDs = widgetIDs
        wanted = player.map { $0.hasPrefix(Self.prefix) ? String($0.dropFirst(Self.prefix.count)) : $0 }
    }

    private func run() {
        queue.sync {
            let t = DispatchSource.makeTimerSource(queue: queue)
            t.schedule(deadline: .now(), repeating: .milliseconds(500))
            t.setEventHandler { [weak self] in self?.poll() }
            t.resume()
            timer = t
        }
    }

    public func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
        }
    }

    /// Picks the player to follow among the names on the bus.
    static func choose(from names: [String], wanted: String?) -> String? {
        let players = names.filter { $0.hasPrefix(prefix) }.sorted()
        if let wanted { return players.first { $0 == prefix + wanted || $0.hasPrefix(prefix + wanted + ".") } }
        return players.first
    }

    private func poll() {
        let name: String?
        do { name = Self.choose(from: try bus.names(), wanted: wanted) } catch { return }
        if name != player {
            if let old = player { session.events.publish(.playerLost(player: old)) }
            player = name
            last = nil
            if let name { session.events.publish(.playerFound(player: name)) }
        }
        guard let name else { return }
        guard let props = try? bus.call(name, Self.objectPath, "org.freedesktop.DBus.Properties", "GetAll",
                                        [.string(Self.playerInterface)]).child(0) else { return }
        let track = Self.track(from: props)
        apply(track, player: name)
    }

    /// Reads `Metadata`, `PlaybackStatus` and `Position` (microseconds) from the player's properties.
    static func track(from props: Variant) -> Track {
        var t = Track()
        if let meta = props.lookup("Metadata") {
            t.title = meta.lookup("xesam:title")?.string ?? ""
            t.artist = (meta.lookup("xesam:artist")?.strings ?? []).joined(separator: ", ")
            t.album = meta.lookup("xesam:album")?.string ?? ""
            t.duration = max(0, Double(meta.lookup("mpris:length")?.integer ?? 0) / 1e6)
            if let art = meta.lookup("mpris:artUrl")?.string, let url = URL(string: art), url.isFileURL,
               FileManager.default.isReadableFile(atPath: url.path) {
                t.artwork = url.path
            }
        }
        t.playing = props.lookup("PlaybackStatus")?.string == "Playing"
        t.position = max(0, Double(props.lookup("Position")?.integer ?? 0) / 1e6)
        return t
    }

    private func apply(_ track: Track, player: String) {
        var body: [String: JSONValue] = [:]
        let previous = last
        let now = Date()
        let sameTrack = previous.map { $0.title == track.title && $0.artist == track.artist && $0.album == track.album
                                       && $0.duration == track.duration } ?? false
        if !sameTrack {
            body["title"] = .string(track.title)
            body["artist"] = .string(track.artist)
            body["album"] = .string(track.album)
            body["duration"] = .number(min(track.duration, 86400 * 7))
            body["artwork"] = .string(track.artwork ?? "")
        } else if previous?.artwork != track.artwork {
            body["artwork"] = .string(track.artwork ?? "")
        }
        if previous?.playing != track.playing { body["playing"] = .bool(track.playing) }
        // Where the card would be now if nothing happened since the last message.
        let expected = previous.map { $0.position + ($0.playing ? now.timeIntervalSince(lastSent) : 0) }
        if !body.isEmpty || expected.map({ abs($0 - track.position) > 1.0 }) ?? true {
            body["position"] = .number(min(track.position, 86400 * 7))
        }
        guard !body.isEmpty else { return }
        var applied = false
        for id in widgetIDs {
            do {
                try session.updateWidget(id: id, properties: body)
                applied = true
            } catch {
                session.events.publish(.playerIgnored(player: player, reason: error.message))
            }
        }
        guard applied else { return }
        last = track
        lastSent = now
        if !sameTrack || previous?.playing != track.playing {
            session.events.publish(.nowPlayingChanged(player: player, title: track.title, artist: track.artist,
                                                      playing: track.playing))
        }
    }
}
