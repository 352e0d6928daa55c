import ArgumentParser
import Compositor
import Foundation

struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Decode a stream and measure it by its timecode strip: fps, latency, drops, freezes, picture fidelity.",
        discussion: """
        URL: rtsp://… (TCP or UDP), rtmp://…, srt://…, whep+http://… or whep+https://… (WebRTC from a WHEP
        server: pipcompose's /v1/whep or any other; H.264 or VP8; no --av yet), file://… or a path, an .sdp file
        describing plain RTP (what run --push rtp://… sends; deploy/janus/pipcompose.sdp), or any URI GStreamer opens. The source
        must carry a `timecode` widget (docs/TIMECODE.md) for latency and drops; without one, fps and decode
        figures are still reported. Latency = wall clock when a frame is decoded − the time written in its strip
        (both machines' clocks must agree when they differ). With --reference SCENE, every decoded picture is compared
        with the picture that scene draws for the frame number and time in its strip (SSIM and PSNR on luma; what a
        viewer of this client saw, not only that frames came). Prints a status line a second to stderr, and the
        totals at the end (Ctrl-C ends early). Exit status: 0, 1 on errors, 3 when a threshold is crossed.
        """
    )

    @Argument(help: "The stream or file to measure.")
    var url: String

    @OptionGroup var transport: TransportOption

    @Option(help: "RTSP or RTP (.sdp) client jitter buffer in milliseconds (0 measures the system, not a buffer).")
    var jitterBufferMs: Int = 0

    @Option(help: "Seconds after the first frame left out of the latency percentiles (joining costs; the first frame's latency is reported alone).")
    var warmup: Double = 1

    @OptionGroup var duration: DurationOption

    @Option(help: "Give up when no frame arrives within this many seconds; a live stream whose frames stop for this long ends the probe with a failure (exit 3).")
    var timeout: Double = 15

    @Flag(help: "Also decode the sound and report the A/V offset from its ticks (a source run with --audio ticks).")
    var av = false

    @Flag(help: "Print the report as JSON on stdout (totals and every second).")
    var json = false

    @Option(help: "Also write the JSON report to this file.")
    var report: String?

    @Flag(help: "Replace the --report file if it exists.")
    var overwrite = false

    @Flag(help: "No status line while running.")
    var quiet = false

    @Option(help: "Exit 3 when the p99 latency exceeds this many milliseconds.")
    var maxLatencyMs: Double?

    @Option(help: "Exit 3 when more than this many frames were dropped.")
    var maxDrops: Int?

    @Option(help: ArgumentHelp("Compare every decoded picture with the picture this scene draws for its timecode "
                               + "(the source's scene file, or 'demo'): SSIM, PSNR and corrupt frames.",
                               valueName: "scene"))
    var reference: String?

    @Option(help: "With --reference: a frame is corrupt when the SSIM of one of its 4x4 regions is below this.")
    var corruptBelow: Double = 0.9

    @Option(help: "With --reference: exit 3 when more than this many frames were damaged (corrupt, or strip unreadable).")
    var maxCorrupt: Int?

    @OptionGroup var metricsOptions: MetricsOptions

    @Option(help: "With whep+http(s)://: the WHEP server's bearer token (pipcompose's control token or a watch link's; prefer PIPCOMPOSE_WHEP_TOKEN: options show in ps).")
    var whepToken: String?

    @Flag(help: "With whep+http(s)://: send the offer before ICE gathering completes and the candidates after it, in PATCHes (trickle ICE, RFC 8840); a server that takes none is sent no more.")
    var whepTrickle = false

    @OptionGroup var ice: IceOptions

    func validate() throws {
        guard warmup >= 0 && warmup.isFinite else { throw ValidationError("--warmup must be 0 or more seconds") }
        guard timeout > 0 && timeout.isFinite else { throw ValidationError("--timeout must be a positive number of seconds") }
        if let maxLatencyMs, !(maxLatencyMs >= 0) { throw ValidationError("--max-latency-ms must be 0 or more") }
        if let maxDrops, maxDrops < 0 { throw ValidationError("--max-drops must be 0 or more") }
        guard corruptBelow > 0 && corruptBelow <= 1 else { throw ValidationError("--corrupt-below must be in (0, 1]") }
        if let maxCorrupt, maxCorrupt < 0 { throw ValidationError("--max-corrupt must be 0 or more") }
        if maxCorrupt != nil && reference == nil { throw ValidationError("--max-corrupt needs --reference SCENE") }
        let whep = url.lowercased().hasPrefix("whep+")
        if !whep && (whepToken != nil || whepTrickle || !ice.iceServer.isEmpty) {
            throw ValidationError("--whep-token, --whep-trickle and --ice-server are for a WHEP source (whep+http://HOST/PATH)")
        }
        if ice.icePublicIp != nil { throw ValidationError("--ice-public-ip is for run --webrtc, not for the probe") }
        if let report {
            let dir = URL(fileURLWithPath: report).deletingLastPathComponent().path
            guard FileManager.default.isWritableFile(atPath: dir) else {
                throw ValidationError("--report: cannot write in \(dir)")
            }
            if FileManager.default.fileExists(atPath: report) && !overwrite {
                throw ValidationError("--report: '\(report)' exists; pass --overwrite to replace it")
            }
        }
    }

    func run() throws {
        var run = ProbeRun(url: url)
        run.transport = try transport.value()
        run.jitterBufferMs = jitterBufferMs
        run.sound = av
        run.warmup = warmup
        run.duration = duration.duration
        run.timeout = timeout
        run.corruptBelow = corruptBelow
        run.maxLatencyMs = maxLatencyMs
        run.maxDrops = maxDrops
        run.maxCorrupt = maxCorrupt
        run.webrtc = WHEPClient.Options(token: whepToken ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_WHEP_TOKEN"],
                                        ice: try ice.settings())
        run.webrtc.trickle = whepTrickle
        if let reference {
            do {
                let scene = reference == "demo" ? DemoScene.load() : try SceneLoader.load(path: reference)
                run.reference = (reference, ReferencePicture(scene: scene))
            } catch { throw UserError("--reference: \(error)") }
        }
        let exported = ProbeMetrics()
        let server = try metricsOptions.serve(exported, quiet: quiet)
        if server != nil { run.metrics = exported }
        defer { server?.stop() }
        let interrupted = SignalFlag(SIGINT, SIGTERM)
        let tty = isatty(STDERR_FILENO) != 0
        let result: ProbeReport
        do {
            result = try run.run(shouldStop: { interrupted.raised }, onSecond: { line in
                if !quiet { FileHandle.standardError.write(Data((tty ? "\r\u{1B}[K" + line : line + "\n").utf8)) }
            }, warn: { printWarning($0) })
        } catch { throw UserError(error.description) }
        if tty && !quiet { FileHandle.standardError.write(Data("\n".utf8)) }
        // The last figures stay served until Prometheus has read them once (a scrape interval, 15 s at most).
        if let exported = run.metrics, !exported.waitForScrape(timeout: 15) {
            printWarning("Prometheus did not read the last figures within 15 s (is it scraping \(server?.url ?? "")?)")
        }
        if let report {
            do { try Data(result.json().utf8).write(to: URL(fileURLWithPath: report)) } catch {
                throw UserError("cannot write the report to \(report): \(error.localizedDescription)")
            }
        }
        print(json ? result.json() : result.text)
        if !result.failures.isEmpty { throw ExitCode(3) }
    }
}
