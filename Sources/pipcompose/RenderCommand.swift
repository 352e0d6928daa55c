import ArgumentParser
import Compositor
import Foundation

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a scene to files as fast as the machine allows, every frame at its own scene time.",
        discussion: """
        Frame n is drawn at scene time n ÷ fps and nothing is dropped: the encoder, not a clock, sets the pace. Clocks \
        show scene-derived time (--wall, plus the scene time), so two renders of a scene give the same pictures. \
        Sound (--audio ticks, tone, tone:HZ, or music) is put on the same timeline to the sample. Web pages run on the \
        scene's clock: their Date, timers, animation frames and CSS animations move one frame a frame, and each \
        frame is taken once every page has drawn it. Video layers run on the wall clock: record those with \
        `run --record`.
        """
    )

    @Argument(help: "Scene file (YAML or JSON). Without one, the built-in demo scene.")
    var scene: String?

    @Option(help: "Scene seconds to render.")
    var duration: Double

    @Option(name: .shortAndLong, help: "A file to write: .mp4, .mkv or .ts; FILE@WxH: the scene laid out for that size (a rendition). Repeatable: several files of one render.")
    var output: [String] = []

    @Flag(help: "Replace files that exist.")
    var overwrite = false

    @OptionGroup var size: SizeOption
    @OptionGroup var rate: FrameRateOption

    @Option(help: "What clocks show at scene time 0: Unix seconds, ISO 8601, or 'now' (default: 2000-01-01T00:00:00Z, so a UTC clock shows the scene time).")
    var wall: String?

    @Option(help: "Sound: none, ticks, tone, tone:HZ, or music: an audio file, a folder of them or a playlist (.m3u, .pls), played in order and looped (default: the scene's).")
    var audio: String?

    @Option(help: "Data changes on the timeline: a YAML or JSON list of {at: SECONDS (or frame: N), widget: ID, set: {PROPERTY: VALUE}} (as PATCH /v1/widgets/ID) or {at: …, widget: ID, call: NAME, data: VALUE} (a web page's function, as POST /v1/web/ID), each landing on its frame.")
    var cues: String?

    @Option(help: "Seconds a web page may take to load before the render gives up.")
    var webLoadTimeout: Double = 30

    @Option(help: "x264 speed preset: ultrafast … placebo.")
    var preset = "veryfast"

    @Option(help: "Video bitrate in kbit/s (default: from the picture size).")
    var bitrate: Int?

    func validate() throws {
        guard EncoderSettings.presets.contains(preset) else {
            throw ValidationError("--preset must be one of \(EncoderSettings.presets.joined(separator: ", ")), got '\(preset)'")
        }
        if let bitrate, !(50...200_000).contains(bitrate) {
            throw ValidationError("--bitrate must be 50...200000 kbit/s, got \(bitrate)")
        }
        if let wall { _ = try wallStart(wall) }
        guard (1...600).contains(webLoadTimeout) else {
            throw ValidationError("--web-load-timeout must be 1...600 seconds, got \(webLoadTimeout)")
        }
        if let audio { do { _ = try AudioChoice.parse(audio) } catch { throw ValidationError("\(error)") } }
    }

    func wallStart(_ text: String) throws -> Date {
        if text == "now" { return Date() }
        if let s = Double(text), s.isFinite { return Date(timeIntervalSince1970: s) }
        if let d = ISO8601DateFormatter().date(from: text) { return d }
        throw ValidationError("--wall must be Unix seconds, ISO 8601 like 2026-01-02T03:04:05Z, or now; got '\(text)'")
    }

    func run() throws {
        let scene = try loadScene(self.scene)
        var settings = SceneRender.Settings(
            scene: scene, size: try size.value() ?? scene.size, fps: rate.fps ?? scene.fps, duration: duration,
            wallStart: try wall.map(wallStart) ?? SceneRender.defaultWallStart,
            audio: try audio.map { try AudioChoice.parse($0) } ?? scene.audio, outputs: output)
        settings.overwrite = overwrite
        settings.preset = preset
        settings.bitrate = bitrate ?? 0
        settings.web.loadTimeout = webLoadTimeout
        if let cues { do { settings.cues = try Cues.load(path: cues) } catch { throw UserError(error.description) } }
        let render: SceneRender
        do { render = try SceneRender(settings, warn: printWarning) } catch { throw UserError(error.description) }
        var shown = Date()
        let summary: SceneRender.Summary
        do {
            summary = try render.run { done, of in
                guard Date().timeIntervalSince(shown) >= 1 else { return }
                shown = Date()
                say("rendered \(done) of \(of) frames")
            }
        } catch { throw UserError("render: \(error)") }
        let speed = String(format: "%.2f", summary.speed)
        say("wrote \(output.joined(separator: ", ")): \(summary.frames) frames, \(settings.size) at \(settings.fps) fps, "
              + "\(summary.sceneSeconds) s of scene in \(String(format: "%.2f", summary.seconds)) s (\(speed)× real time)")
    }
}
