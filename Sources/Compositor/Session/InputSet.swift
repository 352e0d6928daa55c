import Foundation

/// Every input of a run: the music and the sound track made of it (started before the first frame), and the inputs
/// of the scene's input widgets (video layers' sources, web pages), started once the outputs are open. The session starts, stops,
/// reports and tells them alike; the web feature and the music's verbs find their own by kind.
///
/// `@unchecked Sendable`: every field is behind `lock`, held only to copy or replace.
final class InputSet: @unchecked Sendable {
    private let lock = NSLock()
    private var all: [any SessionInput] = []
    /// How many of `all` (the first ones) were stopped.
    private var stopped = 0
    private var _sound: AudioTrack?
    /// What the now-playing card shows, as `window.pipcompose` tells pages; read on the render thread.
    private var _nowPlaying: NowPlayingConfig?

    /// Starts `inputs` and keeps them until `stop()`.
    func start(_ inputs: [any SessionInput]) {
        lock.withLock { all += inputs }
        for input in inputs { input.start() }
    }

    /// Stops every input, in the order they started (the music before the layers and pages), once. They stay in
    /// the set: the end-of-run summary still says what the music was at.
    func stop() {
        let stopping = lock.withLock { () -> [any SessionInput] in
            defer { stopped = all.count }
            return Array(all[stopped...])
        }
        for input in stopping { input.stop() }
    }

    /// The inputs of a kind.
    func of<Kind: SessionInput>(_ kind: Kind.Type) -> [Kind] { lock.withLock { all.compactMap { $0 as? Kind } } }

    var music: MusicInput? { of(MusicInput.self).first }

    /// The run's sound track, made of the music (or ticks, a tone, silence), from the start until it is finished.
    var sound: AudioTrack? {
        get { lock.withLock { _sound } }
        set { lock.withLock { _sound = newValue } }
    }

    func report(into status: inout LiveSession.Status) {
        for input in lock.withLock({ all }) { input.report(into: &status) }
    }

    func widgetChanged(id: String, _ change: any WidgetChange) {
        for input in lock.withLock({ all }) { input.widgetChanged(id: id, change) }
    }

    func willResize(to size: PixelSize, scene: Scene) {
        for input in lock.withLock({ all }) { input.willResize(to: size, scene: scene) }
    }

    var nowPlaying: NowPlayingConfig? {
        get { lock.withLock { _nowPlaying } }
        set { lock.withLock { _nowPlaying = newValue } }
    }
}
