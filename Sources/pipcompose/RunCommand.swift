import ArgumentParser
import Compositor
import Foundation

struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Render a scene live, encode it, and serve, record or push it.",
        discussion: """
        With no output options, serves RTSP at rtsp://127.0.0.1:8554/pip. Type `resize WxH` (or just WxH) and
        Enter on standard input to change the render size while running; `status` prints the counters.
        Ctrl-C or SIGTERM finalizes every file and exits 0.
        """
    )

    @Argument(help: "Scene file (YAML or JSON). Without one, the built-in demo scene.")
    var scene: String?

    @Option(help: "Render size WIDTHxHEIGHT, even numbers up to 7680x4320 (default: the scene's size).")
    var size: String?

    @Option(help: "Frames per second, 1...120 (default: the scene's fps).")
    var fps: Int?

    @Option(help: "Serve RTSP at [HOST:]PORT/PATH, e.g. 8554/pip or 0.0.0.0:8554/pip (port 0 picks a free port).")
    var rtsp: String?

    @Option(help: "RTSP viewers must log in as this user (with --rtsp-password or PIPCOMPOSE_RTSP_PASSWORD).")
    var rtspUser: String?

    @Option(help: "The RTSP password (prefer the PIPCOMPOSE_RTSP_PASSWORD environment variable: options show in ps).")
    var rtspPassword: String?

    @Option(help: "Record to FILE; the format comes from the extension: .mp4 (fragmented), .mkv, .ts. Repeatable.")
    var record: [String] = []

    @Option(help: "What .mp4/.mkv recordings do when the size changes: fit (letterbox) or split (new file).")
    var recordResize: String = "fit"

    @Option(help: "Push to a server: rtmp://…, srt://HOST:PORT or rtsp://… (RECORD). Repeatable.")
    var push: [String] = []

    @Option(help: "A gst-launch tail fed the H.264 stream (must start with 'appsrc name=in'). Repeatable.")
    var pipeline: [String] = []

    @Option(help: "Stop after this many seconds and finalize the outputs.")
    var duration: Double?

    @Option(help: "H.264 encoder: auto (hardware when present, else x264), x264, vaapi, nvenc.")
    var encoder: String = "x264"

    @Option(help: "x264 speed preset (ultrafast … veryslow).")
    var preset: String = "ultrafast"

    @Option(help: "Bitrate in kbit/s (default: from the picture size).")
    var bitrate: Int?

    @Option(help: "Frames between key frames (default: one second).")
    var keyint: Int?

    @Option(help: "Serve the HTTP control API at [HOST:]PORT (port 0 picks a free one).")
    var control: String = "127.0.0.1:8555"

    @Option(help: "Bearer token the control API requires; needed to listen on a non-loopback address.")
    var controlToken: String?

    @Flag(help: "Do not serve the control API.")
    var noControl = false

    @Option(help: "Feed a ticker from a text file, one item a line, followed as it grows: ID=PATH (e.g. memo=news.txt).")
    var tickerFile: [String] = []

    @Option(help: "Feed a ticker from standard input, one item a line (stdin then takes no commands): ID.")
    var tickerStdin: String?

    @Option(help: "Follow this MPRIS media player on the D-Bus session bus (e.g. vlc); default: the first one there.")
    var mprisPlayer: String?

    @Flag(help: "Do not follow media players over D-Bus (MPRIS) in the now-playing card.")
    var noMpris = false

    @Option(help: "Print a status line (frames, drops, each output) every this many seconds; 0 = never.")
    var statusEvery: Double = 0

    @Option(help: "Leave frames out before the encoder, to test a probe or a video system: every:N or burst:K/N.")
    var injectDrops: String?

    @Option(help: "Hold every encoded frame this many milliseconds before the outputs get it (0...10000).")
    var injectDelayMs: Double = 0

    @Flag(help: "Print every pipeline that would run, then exit.")
    var dumpPipeline = false

    func validate() throws {
        _ = try parseSizeOption(size)
        if let fps, !(1...120).contains(fps) { throw ValidationError("--fps must be 1...120, got \(fps)") }
        if let duration, !(duration > 0 && duration.isFinite) {
            throw ValidationError("--duration must be a positive number of seconds, got \(duration)")
        }
        guard OutputSpec.ResizePolicy(rawValue: recordResize) != nil else {
            throw ValidationError("--record-resize must be fit or split, got '\(recordResize)'")
        }
        guard EncoderSettings.Kind(rawValue: encoder) != nil else {
            throw ValidationError("--encoder must be one of \(EncoderSettings.Kind.allCases.map(\.rawValue).joined(separator: ", ")), got '\(encoder)'")
        }
        guard EncoderSettings.presets.contains(preset) else {
            throw ValidationError("--preset must be one of \(EncoderSettings.presets.joined(separator: ", ")), got '\(preset)'")
        }
        if let bitrate, !(50...200_000).contains(bitrate) { throw ValidationError("--bitrate must be 50...200000 kbit/s") }
        if let keyint, !(1...1000).contains(keyint) { throw ValidationError("--keyint must be 1...1000 frames") }
        if let injectDrops {
            do { _ = try DropPattern.parse(injectDrops) } catch { throw ValidationError("--inject-drops: \(error)") }
        }
        guard (0...10_000).contains(injectDelayMs) else {
            throw ValidationError("--inject-delay-ms must be 0...10000, got \(injectDelayMs)")
        }
        for p in pipeline where !FileManager.default.isReadableFile(atPath: p) {
            throw ValidationError("--pipeline '\(p)': no such readable file")
        }
        _ = try outputs()
        for f in tickerFile where !f.contains("=") {
            throw ValidationError("--ticker-file takes ID=PATH, e.g. memo=news.txt; got '\(f)'")
        }
        if !noControl {
            do {
                let (host, _) = try ControlServer.parseAddress(control)
                let loopback = ["127.0.0.1", "localhost", "::1"].contains(host)
                if !loopback && (controlToken ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_CONTROL_TOKEN"] ?? "").isEmpty {
                    throw ValidationError("the control API on \(host) is reachable from other machines: give "
                                          + "--control-token TOKEN (or PIPCOMPOSE_CONTROL_TOKEN)")
                }
            } catch let e as ControlError { throw ValidationError(e.message) }
        }
    }

    func outputs() throws -> [OutputSpec] {
        let policy = OutputSpec.ResizePolicy(rawValue: recordResize) ?? .fit
        var specs: [OutputSpec] = []
        do {
            let password = rtspPassword ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_RTSP_PASSWORD"]
            if (rtspUser == nil) != (password == nil) {
                throw OutputSpec.Invalid(description: "--rtsp-user and a password (--rtsp-password or "
                                         + "PIPCOMPOSE_RTSP_PASSWORD) go together")
            }
            if rtsp != nil || rtspUser != nil {
                var endpoint = try rtsp.map { try RTSPEndpoint.parse($0) } ?? RTSPEndpoint()
                endpoint.user = rtspUser
                endpoint.password = password
                specs.append(.rtsp(endpoint))
            }
            for r in record { specs.append(try OutputSpec.record(r, policy: policy)) }
            for p in push { specs.append(try OutputSpec.push(p)) }
        } catch { throw ValidationError("\(error)") }
        for p in pipeline { specs.append(.custom(path: p)) }
        return specs
    }

    func run() throws {
        let scene = try loadScene(self.scene)
        var options = LiveOptions(scene: scene, size: try parseSizeOption(size), fps: fps, outputs: try outputs())
        options.duration = duration
        options.injectDrops = try injectDrops.map { try DropPattern.parse($0) }
        options.injectDelayMs = injectDelayMs
        options.encoder.kind = EncoderSettings.Kind(rawValue: encoder)!
        options.encoder.preset = preset
        options.encoder.bitrate = bitrate ?? 0
        options.encoder.keyInterval = keyint ?? 0
        let session = LiveSession(options: options, log: { printLog($0) })
        let dump: [(String, String)]
        do { dump = try session.prepare() } catch { throw UserError("\(error)") }
        if dumpPipeline {
            for (name, text) in dump { print("# \(name)\n\(text)\n") }
            return
        }
        let stopper = Stopper(session: session)
        stopper.installSignalHandlers()
        var server: ControlServer?
        if !noControl {
            do {
                let (host, port) = try ControlServer.parseAddress(control)
                let token = controlToken ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_CONTROL_TOKEN"]
                let s = try ControlServer(session: session, host: host, port: port, token: token)
                try s.start()
                server = s
            } catch { throw UserError("\(error)") }
        }
        let controlServer = server
        stopper.onStop = { controlServer?.stop() }
        do { try session.start() } catch {
            server?.stop()
            throw UserError("cannot start: \(error)")
        }
        if let server { print("control \(server.url)") }
        var feeds: [TickerFeed] = []
        do {
            for f in tickerFile {
                let parts = f.split(separator: "=", maxSplits: 1).map(String.init)
                let feed = try TickerFeed(session: session, widgetID: parts[0])
                feed.watch(path: parts[1])
                feeds.append(feed)
            }
            if let id = tickerStdin { stopper.stdinFeed = try TickerFeed(session: session, widgetID: id) }
        } catch {
            stopper.finish(reason: "bad ticker feed")
            throw UserError("\(error)")
        }
        let mpris = noMpris ? nil : MPRISFeed.start(session: session, player: mprisPlayer, log: { printLog($0) })
        if let rtsp = session.rtsp { print("serving \(rtsp.url)") }
        for c in session.pipelineOutputs { print("output \(c.id)") }
        print("\(options.size) at \(options.fps) fps; type 'resize WxH' + Enter to resize, Ctrl-C to stop")
        fflush(nil)
        stopper.readCommands()
        if statusEvery > 0 { stopper.printStatus(every: statusEvery) }
        if duration != nil {
            DispatchQueue.global().async {
                session.waitUntilFinished()
                stopper.finish(reason: "duration reached")
            }
        }
        let ok = stopper.waitForEnd()
        feeds.forEach { $0.stop() }
        mpris?.stop()
        let s = session.status
        print("stopped after \(s.frame + 1) frames: rendered \(s.rendered), repeated \(s.repeated), "
              + "encoded \(s.encoded), dropped \(s.dropped) (late \(s.late), at the encoder \(s.encoderDropped))"
              + (s.injected > 0 ? ", left out on purpose \(s.injected)" : ""))
        for o in s.outputs { print("\(o.id): \(o.delivered) frames, \(o.bytes) bytes, dropped \(o.dropped)") }
        if let h = s.delayHeld {
            print(String(format: "delay held (--inject-delay-ms): p50 %.2f ms, p99 %.2f ms, max %.2f ms, %d frames",
                         h.p50, h.p99, h.max, h.samples))
        }
        if !ok { throw UserError("some outputs did not finish in time; their files may lack the last second") }
    }
}

/// Ends a run once, from a signal, the duration, or stdin closing: stops the session (finalizing files) and
/// wakes the main thread.
final class Stopper: @unchecked Sendable {
    let session: LiveSession
    private let lock = NSLock()
    private var stopping = false
    private var result = true
    private let done = DispatchSemaphore(value: 0)
    private var sources: [DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "signals")

    /// When set, standard input lines are ticker items instead of commands.
    var stdinFeed: TickerFeed?

    /// Runs once the session has stopped (closes the control API).
    var onStop: (@Sendable () -> Void)?

    init(session: LiveSession) { self.session = session }

    func installSignalHandlers() {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let src = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            src.setEventHandler { [weak self] in
                guard let self else { return }
                if self.lock.withLock({ self.stopping }) {
                    FileHandle.standardError.write(Data("second signal: exiting without finalizing\n".utf8))
                    exit(130)
                }
                DispatchQueue.global().async { self.finish(reason: sig == SIGINT ? "interrupted" : "terminated") }
            }
            src.resume()
            sources.append(src)
        }
    }

    func finish(reason: String) {
        let first = lock.withLock { () -> Bool in
            if stopping { return false }
            stopping = true
            return true
        }
        guard first else { return }
        FileHandle.standardError.write(Data("\(reason): finalizing outputs…\n".utf8))
        let ok = session.stop()
        onStop?()
        lock.withLock { result = ok }
        done.signal()
    }

    func waitForEnd() -> Bool {
        done.wait()
        return lock.withLock { result }
    }

    private var timer: DispatchSourceTimer?

    func showStatus() {
        let s = session.status
        var text = "status: \(s.size) frame \(s.frame) rendered \(s.rendered) repeated \(s.repeated) "
            + "dropped \(s.dropped) viewers \(s.viewers)\n"
        for o in s.outputs { text += "  \(o.id): \(o.state), \(o.delivered) frames, \(o.bytes) bytes, dropped \(o.dropped)\n" }
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    func printStatus(every seconds: Double) {
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + seconds, repeating: seconds)
        t.setEventHandler { [weak self] in self?.showStatus() }
        t.resume()
        timer = t
    }

    /// The stdin door: `resize WxH`, `WxH`, `status`.
    func readCommands() {
        let t = Thread { [self] in
            while let line = readLine() {
                if let feed = stdinFeed {
                    feed.append(line)
                    continue
                }
                let words = line.split(separator: " ").map(String.init)
                guard let first = words.first else { continue }
                let arg = first == "resize" ? words.dropFirst().first : (first.contains("x") ? first : nil)
                if first == "status" {
                    showStatus()
                } else if let arg {
                    do { session.requestResize(try RenderSize.parse(arg)) } catch { printWarning("\(error)") }
                } else {
                    printWarning("unknown command '\(line)'; use 'resize WxH' or 'status'")
                }
                fflush(nil)
            }
        }
        t.name = "stdin"
        t.start()
    }
}
