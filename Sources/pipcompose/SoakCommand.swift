import ArgumentParser
import Compositor
import Foundation

/// `soak` runs a soak (its default) or builds a soak report from a Prometheus (`soak report`).
struct SoakCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Run N live streams and M probing viewers in one process (soak run, the default), or report a fleet's soak from Prometheus (soak report).",
        subcommands: [SoakRunCommand.self, SoakReportCommand.self],
        defaultSubcommand: SoakRunCommand.self
    )
}

struct SoakRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run N live streams and M probing viewers in one process; sample everything each second.",
        discussion: """
        Each stream is a scene with a timecode strip served at rtsp://127.0.0.1:<free port>/soakI; viewer J
        probes stream J mod N. Every second: CPU, resident memory, frames rendered and dropped at the sources,
        the viewers' fps, drops, repeats and latency (and with --av the A/V offset of each tick), appended to REPORT/samples.jsonl as it runs; at the end
        REPORT/soak.json (totals, streams, viewers, samples) and REPORT/soak.html (charts).
        Ctrl-C ends early and still writes the report. Exit status 3 when a viewer saw drops or unreadable
        strips, a source dropped, or a viewer failed or never read a strip.
        With --viewers-only URL no stream runs here: the viewers watch streams elsewhere (machines of a fleet loading
        one system), and --metrics serves their figures to a Prometheus that `soak report --prometheus` reads. WebRTC
        servers are soaked with --viewers-only whep+http://HOST/PATH: with --decode K, K viewers decode and the
        rest only account for frames (drops, repeats and stalls exact, no latency), so hundreds fit on one machine.
        """
    )

    @Option(help: "Live streams, 1...\(SoakConfig.maxStreams).")
    var streams: Int = 1

    @Option(help: "Probing viewers spread over the streams, 0...\(SoakConfig.maxViewers).")
    var viewers: Int = 1

    @OptionGroup var size: SizeOption
    @OptionGroup var rate: FrameRateOption
    @OptionGroup var duration: DurationOption
    @OptionGroup var transport: TransportOption

    @Option(help: "Folder for soak.json and soak.html (created if missing).")
    var report: String = "soak-report"

    @Flag(help: "Streams carry sound (--audio ticks) and viewers measure the A/V offset of every tick: charted per second, with its drift per hour.")
    var av = false

    @Option(help: "Each viewer compares one picture in this many with the scene's render (SSIM; 1 = every picture).")
    var compareEvery: Int = 30

    @Option(help: ArgumentHelp("Run no stream: the viewers watch this stream, rtsp:// or whep+http(s):// (repeatable; viewer J watches URL J mod count).",
                               valueName: "url"))
    var viewersOnly: [String] = []

    @Option(help: ArgumentHelp("With --viewers-only whep+http://…: every viewer accounts for every frame by its RTP timestamp without decoding, and only this many at a time decode too (latency, pictures), in turn (--rotate-every), so many more fit on one machine.",
                               valueName: "K"))
    var decode: Int?

    @Option(help: "With --decode: how long each turn of the decoding sample lasts, in seconds (the next K viewers decode after it).")
    var rotateEvery: Double = 10

    @Option(help: "With whep+http(s):// viewers: the WHEP server's bearer token (prefer PIPCOMPOSE_WHEP_TOKEN: options show in ps).")
    var whepToken: String?

    @Option(help: ArgumentHelp("With --viewers-only: the scene those streams draw, to compare the pictures with (SSIM).",
                               valueName: "scene"))
    var reference: String?

    @OptionGroup var metricsOptions: MetricsOptions

    /// Every option, checked once (a bad one is a ValidationError with its rule).
    func config() throws -> SoakConfig {
        var c = SoakConfig(streams: streams, viewers: viewers, size: try size.value() ?? PixelSize(width: 640, height: 360),
                           fps: rate.fps ?? 30, duration: duration.duration ?? 60, reportDirectory: report)
        c.transport = try transport.value()
        guard compareEvery >= 1 else { throw ValidationError("--compare-every must be 1 or more") }
        c.compareEvery = compareEvery
        c.av = av
        c.viewersOf = viewersOnly
        c.decode = decode
        c.rotateEvery = rotateEvery
        c.webrtc = WHEPClient.Options(token: whepToken ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_WHEP_TOKEN"])
        if let reference {
            do { c.reference = reference == "demo" ? DemoScene.load() : try SceneLoader.load(path: reference) } catch {
                throw ValidationError("--reference: \(error)")
            }
        }
        do { try c.validate() } catch { throw ValidationError("\(error)") }
        return c
    }

    func run() throws {
        var config = try checked(config)
        let exported = ProbeMetrics()
        let server = try metricsOptions.serve(exported, quiet: false)
        defer { server?.stop() }
        if server != nil { config.metrics = exported }
        let runner = SoakRunner(config: config, log: { printLog($0) })
        let stop = SignalFlag(SIGINT, SIGTERM)
        let result: SoakReport
        do { result = try runner.run(shouldStop: { stop.raised }) } catch { throw UserError("soak: \(error)") }
        print(result.text)
        print("report: \(runner.jsonPath), \(runner.htmlPath)")
        let problems = result.problems
        for p in problems { printLog("soak: \(p)") }
        if !problems.isEmpty { throw ExitCode(3) }
    }
}
