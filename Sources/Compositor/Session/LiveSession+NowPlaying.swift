import Foundation

/// What a browser's Picture-in-Picture window shows and offers (`GET /v1/nowplaying`, the live page's Media
/// Session): the now-playing card's metadata and cover, the scene's play state and time, and which skips work.
extension LiveSession {
    /// The card as it was last read on the render thread (once a second), or as the scene gives it before that.
    var nowPlayingCard: NowPlayingConfig? {
        inputs.nowPlaying ?? renderer.scene.widgets.lazy.compactMap { $0.config as? NowPlayingConfig }.first
    }

    public func nowPlaying() -> NowPlayingPayload {
        let card = nowPlayingCard, music = inputs.music?.player
        var title = card?.title ?? "", artist = card?.artist ?? "", album = card?.album ?? ""
        // No card: the music's own tags.
        if card == nil, let heard = music?.nowPlaying {
            (title, artist, album) = (heard.file.displayTitle, heard.file.artist, heard.file.album)
        }
        let artwork = card?.artwork.flatMap { $0.isEmpty ? nil : NowPlayingPayload.artworkURL(for: $0) }
        let position = loop.map { playback.media(at: $0.runningSeconds) } ?? 0
        return NowPlayingPayload(title: title, artist: artist, album: album, artwork: artwork,
                                 playing: !playback.isPaused, position: position, duration: playback.duration,
                                 seek: playback.duration != nil || music != nil, tracks: music != nil)
    }

    /// The card's cover as a PNG `side` pixels on its longer side (its aspect kept), nil when it shows none. Drawn
    /// anew from the picture the card draws, so what leaves is a picture and never the file's own bytes.
    public func artworkPNG(side: Int = 512) throws -> Data? {
        guard let path = nowPlayingCard?.artwork, !path.isEmpty else { return nil }
        let picture = try Picture.load(path: path)
        let k = Double(side) / max(picture.width, picture.height, 1)
        let w = max(1, Int((picture.width * k).rounded())), h = max(1, Int((picture.height * k).rounded()))
        let surface = try ImageSurface(width: w, height: h)
        let canvas = Canvas(surface: surface)
        let box = Rect(x: 0, y: 0, width: Double(w), height: Double(h))
        canvas.paint(box, .black)
        picture.draw(on: canvas, in: box, fit: .fit)
        let file = NSTemporaryDirectory() + "pipcompose-cover-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try surface.writePNG(to: file)
        return try Data(contentsOf: URL(fileURLWithPath: file))
    }
}
