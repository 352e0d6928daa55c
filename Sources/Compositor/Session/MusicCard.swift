import Foundation

/// The now-playing card follows the music of `--audio FILE`: when a file starts being heard, every now-playing
/// card gets its tags (the file's name when it has no title), its cover art, its length and position; pause and
/// play reach it too. Each change is also a `trackChanged` event, with or without a card.
///
/// Cover art is written once, at start, into a private folder the card reads from; a picture the card cannot
/// decode is left out with a warning. The folder goes at `stop()`.
///
/// `@unchecked Sendable`: everything but `session` is set in `init` and only read after; updates run on `queue`,
/// off the frame loop (loading a cover takes milliseconds).
final class MusicCard: @unchecked Sendable {
    private weak var session: LiveSession?
    private let widgetIDs: [String]
    private let folder: String
    private let artwork: [Int: String]
    private let log: @Sendable (String) -> Void
    private let queue = DispatchQueue(label: "music-card")

    init(session: LiveSession, files: [AudioFile], log: @escaping @Sendable (String) -> Void) {
        self.session = session
        self.log = log
        widgetIDs = session.renderer.scene.widgets.compactMap { w -> String? in
            if w.config is NowPlayingConfig { return w.id }
            return nil
        }
        folder = NSTemporaryDirectory() + "pipcompose-covers-\(UUID().uuidString)"
        var artwork: [Int: String] = [:]
        if !widgetIDs.isEmpty && files.contains(where: { $0.cover != nil }) {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for (i, f) in files.enumerated() {
                guard let cover = f.cover else { continue }
                let path = "\(folder)/\(i).\(cover.fileExtension)"
                do {
                    try Data(cover.bytes).write(to: URL(fileURLWithPath: path))
                    _ = try Picture.load(path: path)
                    artwork[i] = path
                } catch {
                    log("warning: audio: the cover art of '\(f.name)' is not a picture the card can show (\(error))")
                }
            }
        }
        self.artwork = artwork
    }

    /// A file started being heard.
    func trackStarted(_ now: MusicPlayer.NowPlaying) {
        queue.async { [weak self] in
            guard let self, let session else { return }
            let f = now.file
            session.events.publish(.trackChanged(index: now.index, file: f.name, title: f.displayTitle, artist: f.artist,
                                                 album: f.album))
            apply(["title": .string(f.displayTitle), "artist": .string(f.artist), "album": .string(f.album),
                   "artwork": .string(artwork[now.index] ?? ""), "duration": .number(min(f.duration, 86400 * 7)),
                   "position": .number(Self.clamped(now.position, f)), "playing": .bool(!now.paused)])
        }
    }

    /// The music was paused or played at `now`.
    func playing(_ playing: Bool, now: MusicPlayer.NowPlaying?) {
        queue.async { [weak self] in
            var body: [String: JSONValue] = ["playing": .bool(playing)]
            if let now { body["position"] = .number(Self.clamped(now.position, now.file)) }
            self?.apply(body)
        }
    }

    private static func clamped(_ position: Double, _ f: AudioFile) -> Double {
        min(max(0, position), f.duration > 0 ? f.duration : 86400 * 7)
    }

    private func apply(_ body: [String: JSONValue]) {
        guard let session else { return }
        for id in widgetIDs {
            do { try session.updateWidget(id: id, properties: body) } catch {
                log("warning: audio: the now-playing card '\(id)' did not take the track: \(error.message)")
            }
        }
    }

    func stop() {
        queue.sync {}
        try? FileManager.default.removeItem(atPath: folder)
    }
}
