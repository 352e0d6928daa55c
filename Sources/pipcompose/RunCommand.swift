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

    @Option(help: "x264 threads, 1...16; 0 lets x264 choose from the machine's cores.")
    var encoderThreads: Int = 0

    @Option(help: "Serve the HTTP control API at [HOST:]PORT (port 0 picks a free one).")
    var control: String = "127.0.0.1:8555"

    @Option(help: "The control API's bearer token (default: $PIPCOMPOSE_CONTROL_TOKEN, else a random one, kept where only you can read it, for pipcompose ctl).")
    var controlToken: String?

    @Flag(help: "No token on the control API (loopback only): any program of any account on this machine may then drive it.")
    var noControlToken = false

    @Option(help: "Let the page at this origin call the control API from a browser (CORS), e.g. https://panel.example:8443. Repeatable.")
    var allowOrigin: [String] = []

    @Option(help: "Answer requests that name this machine HOST (a name or address other than loopback and the listening address). Repeatable.")
    var allowHost: [String] = []

    @Flag(help: "Serve /metrics without the token (loopback only), for a Prometheus on this machine.")
    var metricsOpen = false

    @Option(help: "A folder recordings started over the control API may write into (default: the folder run starts in). Repeatable.")
    var recordDir: [String] = []

    @Flag(help: "Do not serve the control API.")
    var noControl = false

    @Flag(help: "Serve browsers over WebRTC: WHEP at POST /v1/whep on the control port, and a live page at / there.")
    var webrtc = false

    @Option(help: "The most WebRTC viewers at once (1...1000); one more is refused with 503.")
    var webrtcMaxViewers: Int = 64

    @Option(help: "Seconds a WebRTC viewer may take to connect after its answer before it is dropped (1...300).")
    var webrtcConnectTimeout: Double = 15

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

    @Option(help: "Sound: none, ticks (a tick every second of the timecode, a long one every tenth: the A/V sync signal), tone, tone:HZ, or music: an audio file, an .m3u playlist or a folder of audio files (looped; the now-playing card shows their tags). Default: the scene's audio, else none.")
    var audio: String?

    @Option(help: "The sound's codec in MKV recordings: aac or opus (MP4, TS, RTMP, SRT and RTSP carry AAC).")
    var audioCodec: String = "aac"

    @Option(parsing: .unconditional, help: "Move the sound against the picture by this many milliseconds (-5000...5000; negative: earlier), to check an A/V probe.")
    var injectAvOffsetMs: Double = 0

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
        guard (0...16).contains(encoderThreads) else {
            throw ValidationError("--encoder-threads must be 0...16 (0: x264 chooses), got \(encoderThreads)")
        }
        if let injectDrops {
            do { _ = try DropPattern.parse(injectDrops) } catch { throw ValidationError("--inject-drops: \(error)") }
        }
        guard (0...10_000).contains(injectDelayMs) else {
            throw ValidationError("--inject-delay-ms must be 0...10000, got \(injectDelayMs)")
        }
        if let audio { do { _ = try AudioChoice.parse(audio) } catch { throw ValidationError(error.description) } }
        do { _ = try AudioCodec.parse(audioCodec) } catch { throw ValidationError(error.description) }
        guard (-5000...5000).contains(injectAvOffsetMs) else {
            throw ValidationError("--inject-av-offset-ms must be -5000...5000, got \(injectAvOffsetMs)")
        }
        do { _ = try outputs().specs() } catch { throw ValidationError("\(error)") }
        for f in tickerFile where !f.contains("=") {
            throw ValidationError("--ticker-file takes ID=PATH, e.g. memo=news.txt; got '\(f)'")
        }
        if webrtc && noControl {
            throw ValidationError("--webrtc is served on the control port: drop --no-control")
        }
        guard (1...300).contains(webrtcConnectTimeout) else {
            throw ValidationError("--webrtc-connect-timeout must be 1...300 seconds, got \(webrtcConnectTimeout)")
        }
        guard (1...1000).contains(webrtcMaxViewers) else {
            throw ValidationError("--webrtc-max-viewers must be 1...1000, got \(webrtcMaxViewers)")
        }
        if !noControl {
            if case .failure(let e) = Result(catching: { () throws(ControlError) in try controlSettings() }) {
                throw ValidationError(e.message)
            }
        }
    }

    /// The control API's address and rules; the checks that need no running instance.
    func controlSettings() throws(ControlError) -> ControlSettings {
        let (host, port) = try ControlServer.parseAddress(control)
        var c = ControlSettings(host: host, port: port)
        let loopback = ControlServer.isLoopback(host)
        if noControlToken {
            if token != nil {
                throw .bad("--no-control-token and a token (--control-token or PIPCOMPOSE_CONTROL_TOKEN) contradict "
                           + "each other: drop one")
            }
            if !loopback {
                throw .bad("--no-control-token is for loopback only: the control API on \(host) would let any machine "
                           + "drive it")
            }
            c.token = .none
        } else if let token {
            guard !token.isEmpty, token.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }) else {
                throw .bad("the control token must be printable ASCII without spaces")
            }
            c.token = .given(token)
        }
        try ControlServer.checkExposure(host: host, token: noControlToken ? nil : "x")
        if metricsOpen && !loopback {
            throw .bad("--metrics-open is for loopback only: give Prometheus the token instead (authorization: "
                       + "credentials_file in its scrape config)")
        }
        for o in allowOrigin {
            guard let u = URLComponents(string: o), ["http", "https"].contains(u.scheme ?? ""), u.host?.isEmpty == false,
                  u.path.isEmpty, u.query == nil, u.fragment == nil, u.user == nil else {
                throw .bad("--allow-origin takes an origin like https://panel.example or http://127.0.0.1:3000 "
                           + "(scheme, host, port; no path), got '\(o)'")
            }
        }
        for h in allowHost {
            guard !h.isEmpty, !h.contains("/"), !h.contains("@"), !h.contains(" "), !h.contains("*") else {
                throw .bad("--allow-host takes a host name or address without port or scheme, e.g. pip.lan, got '\(h)'")
            }
        }
        for d in recordDir {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: d, isDirectory: &isDir), isDir.boolValue else {
                throw .bad("--record-dir '\(d)' is not an existing folder; create it first")
            }
        }
        c.allowOrigins = allowOrigin
        c.allowHosts = allowHost
        c.metricsOpen = metricsOpen
        c.recordDirs = recordDir
        return c
    }

    var token: String? { controlToken ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_CONTROL_TOKEN"] }

    func outputs() -> OutputRequest {
        var r = OutputRequest()
        r.rtsp = rtsp
        r.rtspUser = rtspUser
        r.rtspPassword = rtspPassword ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_RTSP_PASSWORD"]
        r.records = record
        r.recordResize = OutputSpec.ResizePolicy(rawValue: recordResize) ?? .fit
        r.pushes = push
        r.pipelines = pipeline
        return r
    }

    func settings() throws -> RunSettings {
        var options = LiveOptions(scene: try loadScene(scene), size: try parseSizeOption(size), fps: fps,
                                  outputs: try outputs().specs())
        options.duration = duration
        options.injectDrops = try injectDrops.map { try DropPattern.parse($0) }
        options.injectDelayMs = injectDelayMs
        options.audio = try audio.map { try AudioChoice.parse($0) } ?? options.scene.audio
        options.injectAVOffsetMs = injectAvOffsetMs
        options.mkvAudioCodec = try AudioCodec.parse(audioCodec)
        options.encoder.kind = EncoderSettings.Kind(rawValue: encoder)!
        options.encoder.preset = preset
        options.encoder.bitrate = bitrate ?? 0
        options.encoder.keyInterval = keyint ?? 0
        options.encoder.threads = encoderThreads
        if webrtc {
            let (host, _) = try ControlServer.parseAddress(control)
            options.webrtc = WebRTCSettings(maxViewers: webrtcMaxViewers, addresses: LocalAddresses.forICE(listeningOn: host))
            options.webrtc?.connectTimeout = webrtcConnectTimeout
        }
        var s = RunSettings(options: options)
        if !noControl { s.control = try controlSettings() }
        s.tickerFiles = tickerFile.map { f in
            let parts = f.split(separator: "=", maxSplits: 1).map(String.init)
            return (parts[0], parts[1])
        }
        s.tickerStdin = tickerStdin
        s.mpris = !noMpris
        s.mprisPlayer = mprisPlayer
        s.statusEvery = statusEvery
        return s
    }

    func run() throws {
        let run = LiveRun(settings: try settings(), say: { say($0) }, log: { printLog($0) })
        let dump: [(String, String)]
        do { dump = try run.prepare() } catch { throw UserError("\(error)") }
        if dumpPipeline {
            for (name, text) in dump { print("# \(name)\n\(text)\n") }
            return
        }
        let started: LiveRun.Started
        do { started = try run.start() } catch { throw UserError("cannot start: \(error)") }
        if let url = started.controlURL {
            say("control \(url)")
            if let file = started.tokenFile { say("token \(file) (pipcompose ctl reads it)") }
            if noControlToken {
                printWarning("--no-control-token: any program of any account on this machine can drive this run, read "
                             + "its picture and record files as you (inside --record-dir); web pages still cannot")
            }
            if webrtc, let page = started.pageURL { say("webrtc \(page) (WHEP: POST \(url)/v1/whep)") }
        }
        if let url = started.rtspURL { say("serving \(url)") }
        for id in started.outputs { say("output \(id)") }
        let o = run.settings.options
        say("\(o.size) at \(o.fps) fps; type 'resize WxH' + Enter to resize, Ctrl-C to stop")
        let ok = run.waitForEnd()
        say(LiveRun.summarize(run.session.status))
        if !ok { throw UserError("some outputs did not finish in time; their files may lack the last second") }
    }
}
