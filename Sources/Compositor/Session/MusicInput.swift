import Foundation

/// The music of `--audio FILE` as the run's input: the player that decodes the files into the sound track, and the
/// now-playing card that follows what is heard. Pause, play and skips reach both.
final class MusicInput: SessionInput {
    let player: MusicPlayer
    let card: MusicCard

    init(player: MusicPlayer, card: MusicCard) {
        self.player = player
        self.card = card
    }

    func start() { player.start() }

    func stop() {
        player.stop()
        card.stop()
    }

    /// Pauses or plays the music; the card says so when that changed anything.
    func setPaused(_ paused: Bool) {
        if player.setPaused(paused) { card.playing(!paused, now: player.nowPlaying) }
    }

    func report(into status: inout LiveSession.Status) {
        status.music = player.nowPlaying
        status.musicGapFrames = player.gapFrames
        status.musicFiles = player.files.count
    }
}
