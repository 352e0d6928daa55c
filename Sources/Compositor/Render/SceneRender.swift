import Foundation

/// `pipcompose render`: a scene drawn frame by frame, each at its own scene time (frame n at n ÷ fps), as fast as the
/// machine allows, and encoded to files (`pipelines/render-file.pipeline`, one pipeline per file). Nothing paces it
/// but the encoders: each file's appsrc blocks while its encoder is busy, so no frame is dropped and memory holds a
/// few frames. Clocks show scene-derived time (`wallStart` + scene time), so a scene renders to the same pictures
/// every time; the sound (ticks, a tone) is drawn sample by sample on the same timeline, and data changes (cues) land
/// on their frames.
///
/// Web pages run on the scene's clock too (`RenderPages`): each frame is taken once every page has drawn its moment,
/// and cues may call a page's functions. Video layers run on the wall clock: a scene with one is refused, with what
/// to do; so is a page whose scripts cannot be put on the scene's clock (one from elsewhere).
public final class SceneRender {
    public struct Settings {
        public var scene: Scene
        public var size: PixelSize
        public var fps: Int
        public var duration: Double
        /// What clocks show at scene time 0.
        public var wallStart: Date
        public var audio: AudioChoice
        public var outputs: [String]
        public var overwrite = false
        public var preset = "veryfast"
        /// kbit/s; 0: the size's default.
        public var bitrate = 0
        /// Data changes on the timeline (`--cues FILE`).
        public var cues: [Cue] = []
        /// How web pages are run (their executable, load timeout, memory limit).
        public var web = WebSettings()

        public init(scene: Scene, size: PixelSize, fps: Int, duration: Double, wallStart: Date, audio: AudioChoice,
                    outputs: [String]) {
            self.scene = scene
            self.size = size
            self.fps = fps
            self.duration = duration
            self.wallStart = wallStart
            self.audio = audio
            self.outputs = outputs
        }

        /// Frames in the render: the duration in whole frames, at least one.
        public var frames: Int64 { max(1, Int64((duration * Double(fps)).rounded())) }
    }

    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// How a render went: frames, the scene seconds they make, the seconds it took.
    public struct Summary: Sendable {
        public var frames: Int64
        public var sceneSeconds: Double
        public var seconds: Double
        public var speed: Double { seconds > 0 ? sceneSeconds / seconds : 0 }
    }

    /// What clocks show at scene time 0 unless told: 2000-01-01T00:00:00Z, so a UTC clock shows the scene time. (Not
    /// the Unix epoch: a timecode strip whose time is 0 reads as no time at all.)
    public static let defaultWallStart = Date(timeIntervalSince1970: 946_684_800)

    public let settings: Settings
    private let warn: @Sendable (String) -> Void
    /// The cues' changes by the frame before which they apply, in the file's order.
    private var changes: [Int64: [(Renderer, Double) -> Void]] = [:]
    /// The files of `--audio FILE` (a file, a folder, a playlist), played in order from the start and looped.
    private var music: [AudioFile]?
    /// The cues' calls of web pages by the frame they show in, in the file's order.
    private var calls: [Int64: [Cue]] = [:]

    /// Checks everything that can be checked before a frame is drawn.
    public init(_ settings: Settings, warn: @escaping @Sendable (String) -> Void) throws(Refusal) {
        self.settings = settings
        self.warn = warn
        guard settings.duration.isFinite, settings.duration > 0 else {
            throw Refusal(description: "--duration must be more than 0 seconds, got \(settings.duration)")
        }
        guard settings.duration <= 86_400 else {
            throw Refusal(description: "--duration is at most 86400 seconds (a day), got \(settings.duration)")
        }
        for w in settings.scene.widgets where w.config is VideoConfig {
            throw Refusal(description: "widget '\(w.id)' (\(w.type)) runs on the wall clock, not the scene's: render "
                          + "draws scenes without video layers; record this one in real time with "
                          + "`pipcompose run SCENE --record FILE --duration \(settings.duration)`")
        }
        if let (id, why) = RenderPages.refusals(in: settings.scene).first {
            throw Refusal(description: "widget '\(id)': \(why); or record the scene in real time with "
                          + "`pipcompose run SCENE --record FILE --duration \(settings.duration)`")
        }
        if case .music(let source) = settings.audio {
            do { music = try Playlist.load(source, warn: warn) } catch { throw Refusal(description: "\(error)") }
        }
        for cue in settings.cues {
            let frame = cue.frame(fps: settings.fps)
            guard frame < settings.frames else {
                throw Refusal(description: "\(cue.place): frame \(frame) is past the render's end (\(settings.frames) "
                              + "frames, \(settings.duration) s)")
            }
            if cue.call != nil {
                guard settings.scene.widgets.contains(where: { $0.id == cue.widget && $0.config is WebConfig }) else {
                    throw Refusal(description: "\(cue.place): '\(cue.widget)' is not a web widget of the scene: "
                                  + "only a page has functions to call (use 'set' for other widgets)")
                }
                calls[frame, default: []].append(cue)
                continue
            }
            do {
                let prepared = try WidgetUpdate.prepare(scene: settings.scene, id: cue.widget, body: cue.properties)
                changes[frame, default: []].append(prepared.apply)
            } catch { throw Refusal(description: "\(cue.place): \(error.message)") }
        }
        guard !settings.outputs.isEmpty else { throw Refusal(description: "name a file to write: -o clip.mp4") }
        var seen = Set<String>()
        for output in settings.outputs {
            let (path, size) = Rendition.splitOutput(output)
            if let size {
                do { _ = try RenderSize.parse("\(size)") } catch {
                    throw Refusal(description: "'\(output)': \(error)")
                }
            }
            _ = try Self.muxer(for: path)
            guard seen.insert(URL(fileURLWithPath: path).standardizedFileURL.path).inserted else {
                throw Refusal(description: "'\(path)' is named twice")
            }
            let dir = URL(fileURLWithPath: path).deletingLastPathComponent().path
            guard FileManager.default.isWritableFile(atPath: dir) else {
                throw Refusal(description: "cannot write '\(path)': directory '\(dir)' does not exist or is not writable")
            }
            if FileManager.default.fileExists(atPath: path) && !settings.overwrite {
                throw Refusal(description: "'\(path)' exists; pass --overwrite to replace it")
            }
        }
    }

    /// The muxer a file's extension asks for.
    static func muxer(for path: String) throws(Refusal) -> String {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "mp4", "m4v", "mov": return "mp4mux fragment-duration=1000"
        case "mkv": return "matroskamux"
        case "ts": return "mpegtsmux"
        default: throw Refusal(description: "'\(path)': render writes .mp4, .mkv or .ts files")
        }
    }

    /// The sound drawn for the render, nil for none: ticks or a tone drawn sample by sample, or the music decoded in
    /// order (the render waits for the decoder, never sends silence in its place).
    private func makeSignal() throws -> (any AudioSignal)? {
        switch settings.audio {
        case .ticks: return TickSignal(rate: AudioTrack.rate)
        case .tone(let hz): return ToneSignal(rate: AudioTrack.rate, hz: hz)
        case .none: return nil
        case .music:
            guard let music else { return nil }
            let player = MusicPlayer(files: music, template: try PipelineTemplate.load("decode-audio"), warn: warn,
                                     waitsForDecoder: true, onTrack: { _ in })
            player.start()
            return player
        }
    }

    /// One picture of the render: the scene laid out for a size, and the files that take it.
    private struct Picture {
        let renderer: Renderer
        let producer: FrameProducer
        var files: [RenderFile]
    }

    /// Draws and encodes every frame; `progress(frame, of)` after each one. Throws when a file could not be written
    /// whole, naming it; the other files are finished whole all the same (a file that fails is dropped from the
    /// render, never holds it up). A file named `FILE@WxH` takes the scene laid out for
    /// that size, drawn at the same scene times (a rendition, as `run` has them), with the cues at the same frames.
    public func run(progress: (Int64, Int64) -> Void = { _, _ in }) throws -> Summary {
        let s = settings, started = Date()
        let signal = try makeSignal()
        defer { (signal as? MusicPlayer)?.stop() }
        var pictures: [PixelSize: Picture] = [:], order: [PixelSize] = []
        var files: [RenderFile] = []
        defer { files.forEach { $0.abandon() } }
        for output in s.outputs {
            let (path, rendition) = Rendition.splitOutput(output)
            let size = rendition ?? s.size
            let file = try RenderFile(path: path, size: size, bitrate: rendition == nil ? s.bitrate : 0, settings: s,
                                      audio: signal != nil)
            files.append(file)
            if pictures[size] == nil {
                pictures[size] = Picture(renderer: Renderer(scene: s.scene, size: size, warn: warn),
                                         producer: try FrameProducer(size: size, fps: s.fps), files: [])
                order.append(size)
            }
            pictures[size]!.files.append(file)
        }
        let sound = try signal.map { signal in try RenderSound(signal: signal, warn: warn, to: files) }
        let wallStart = Int64((s.wallStart.timeIntervalSince1970 * 1000).rounded(.down))
        // The pages belong to the main picture's widgets (drawn or not: a render of renditions only still has one).
        let main = pictures[s.size]?.renderer ?? Renderer(scene: s.scene, size: s.size, warn: warn)
        let pages: RenderPages?
        do {
            pages = try RenderPages(main: main, scene: s.scene, size: s.size, clockStart: wallStart, web: s.web,
                                    warn: warn)
        } catch { throw Refusal(description: "web pages cannot be served: \(error)") }
        defer { pages?.stop() }
        for size in order where pictures[size]!.renderer !== main {
            for case let widget as any InputWidget in pictures[size]!.renderer.widgets { widget.follow(leaderIn: main) }
        }
        try pages?.start()
        let clock = FrameClock(fps: s.fps)
        for n in 0..<s.frames {
            let media = Double(n) / Double(s.fps)
            // Wall time to the millisecond, as the timecode strip records it and as the live loop draws it: a clock
            // showing milliseconds then shows the strip's value, and a reference drawn from the strip is the same.
            let wall = Date(timeIntervalSince1970: Double(wallStart + n * 1000 / Int64(s.fps)) / 1000)
            let time = FrameTime(frame: n, media: media, wall: wall)
            let pts = clock.time(ofFrame: n)
            // The frame's sound first: a muxer waits for both tracks, and the picture has the encoder's delay.
            try sound?.draw(upTo: clock.time(ofFrame: n + 1))
            if let pages {
                var made: [String: [(name: String, argument: String?)]] = [:]
                for cue in calls[n] ?? [] { if let call = cue.call { made[cue.widget, default: []].append(call) } }
                try pages.step(n, ms: Double(n) * 1000 / Double(s.fps), calls: made)
            }
            for size in order {
                let picture = pictures[size]!
                for apply in changes[n] ?? [] { apply(picture.renderer, media) }
                let (buffer, _) = try picture.producer.produce(picture.renderer, at: time)
                buffer.stamp(pts: pts, duration: clock.time(ofFrame: n + 1) - pts)
                // A file that fails (a full disk) is left as far as it got (`mend` mends it); the others go on.
                for f in picture.files where f.isWriting {
                    do { try f.push(buffer) } catch {
                        warn("\(error); the other files go on")
                        f.abandon()
                    }
                }
            }
            progress(n + 1, s.frames)
            guard files.contains(where: \.isWriting) else { break }
        }
        try sound?.finish()
        var failed: [String] = []
        for f in files where !(f.isWriting && f.finish()) { failed.append(f.path) }
        if !failed.isEmpty {
            let whole = files.map(\.path).filter { !failed.contains($0) }
            throw Refusal(description: "could not finish \(failed.joined(separator: ", ")): "
                          + files.compactMap(\.error).joined(separator: "; ")
                          + (whole.isEmpty ? "" : "; written whole: \(whole.joined(separator: ", "))"))
        }
        return Summary(frames: s.frames, sceneSeconds: Double(s.frames) / Double(s.fps),
                       seconds: Date().timeIntervalSince(started))
    }
}
