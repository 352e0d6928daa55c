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
        Ctrl-C or SIGTERM finalizes every file and exits 0, also when an output failed (it says so, and is not
        waited for); 1 when an output did not finish within 10 s, or was stuck in a write and left behind 2 s
        later (named in the message). An output that takes nothing for 10 s while running fails alone as stuck.
        """
    )

    @Argument(help: "Scene file (YAML or JSON). Without one, the built-in demo scene.")
    var scene: String?

    @OptionGroup var size: SizeOption
    @OptionGroup var rate: FrameRateOption

    @Option(help: "Serve RTSP at [HOST:]PORT/PATH, e.g. 8554/pip or 0.0.0.0:8554/pip (port 0 picks a free port); rtsps://[HOST:]PORT/PATH serves RTSP over TLS with --tls-cert and --tls-key.")
    var rtsp: String?

    @Option(help: "RTSP viewers must log in as this user, with a watch link's token as the password (ctl link create), or with --rtsp-password / PIPCOMPOSE_RTSP_PASSWORD.")
    var rtspUser: String?

    @Option(help: "The RTSP password (prefer the PIPCOMPOSE_RTSP_PASSWORD environment variable: options show in ps).")
    var rtspPassword: String?

    @Option(help: "Record to FILE; the format comes from the extension: .mp4 (fragmented), .mkv, .ts. Repeatable.")
    var record: [String] = []

    @Option(help: "What .mp4/.mkv recordings do when the size changes: fit (letterbox) or split (new file).")
    var recordResize: String = "fit"

    @Option(help: "Push to a server: rtmp://…, srt://HOST:PORT, rtsp://… (RECORD), or rtp://HOST:PORT[?audio=PORT] (RTP over UDP for a Janus streaming mountpoint; repeat it for several). Repeatable.")
    var push: [String] = []

    @Option(help: "A gst-launch tail fed the H.264 stream (must start with 'appsrc name=in'). Repeatable.")
    var pipeline: [String] = []

    @Option(help: "Write an HLS ladder into DIR (empty or new): DIR/master.m3u8 and, for the main picture (main/) and each --rendition (WxH/), a playlist of 1 s MPEG-TS segments.")
    var hls: String?

    @Option(help: "Seconds of segments each HLS playlist lists and DIR keeps (3...3600).")
    var hlsWindow: Int = HLSSettings.defaultWindow

    @Option(help: "One more picture of the scene, WIDTHxHEIGHT[@KBPS], drawn with the layout its own size gets and encoded at its own bitrate (default from its size); outputs carry it when named with @WIDTHxHEIGHT (--record small.mp4@416x234). Repeatable.")
    var rendition: [String] = []

    @OptionGroup var duration: DurationOption
    @OptionGroup var encoder: EncoderOptions

    @OptionGroup var control: ControlServerOptions

    @Flag(help: "Serve browsers over WebRTC: WHEP at POST /v1/whep on the control port, and a live page at / there.")
    var webrtc = false

    @OptionGroup var ice: IceOptions

    @Option(help: "The most WebRTC viewers at once (1...1000); one more is refused with 503.")
    var webrtcMaxViewers: Int = 64

    @Option(help: "Seconds a WebRTC viewer may take to connect after its answer before it is dropped (1...300).")
    var webrtcConnectTimeout: Double = 15

    @Option(help: "Renditions made at once for browsers following their windows, each laid out for its window (0...8; 0: none, a window sees the nearest picture there is).")
    var maxRenditions: Int = 4

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

    @Option(help: "The sound's codec in MKV recordings: aac or opus (MP4, TS, RTMP, SRT and RTSP carry AAC; rtp:// pushes and WebRTC Opus).")
    var audioCodec: String = "aac"

    @Option(parsing: .unconditional, help: "Move the sound against the picture by this many milliseconds (-5000...5000; negative: earlier), to check an A/V probe.")
    var injectAvOffsetMs: Double = 0

    @Option(help: "The most memory in MiB a web widget's page (its processes together) may use before it is started again (64...65536).")
    var webMemoryLimit: Int = 1024

    @Option(help: "Seconds a web widget's page may take to load before it is started again (1...600).")
    var webLoadTimeout: Double = 30

    @Option(help: "MiB a web widget's page may grow by, over what it used once settled, before a new launch of it takes its place seamlessly (0: never; 0...65536).")
    var webRenewGrowth: Int = 4

    @Flag(help: "Print every pipeline that would run, then exit.")
    var dumpPipeline = false

    /// What needs no other option's value is checked by the groups; the rest, once, in `settings()`.
    func validate() throws {
        if webrtc && control.noControl {
            throw ValidationError("--webrtc is served on the control port: drop --no-control")
        }
        // RTSP over TLS uses the control port's certificate files: checked here too when that port is off.
        if rtsp?.hasPrefix("rtsps://") == true, control.noControl, let cert = control.tlsCert, let key = control.tlsKey {
            do { _ = try ControlTLS(certificate: cert, key: key) } catch { throw ValidationError(error.message) }
        }
        let password = rtspPassword ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_RTSP_PASSWORD"]
        if rtspUser != nil && password == nil && control.noControl {
            throw ValidationError("--rtsp-user without a password logs viewers in with watch links, which the control "
                                  + "port makes: drop --no-control, or give --rtsp-password")
        }
    }

    func outputs() -> OutputRequest {
        var r = OutputRequest()
        r.rtsp = rtsp
        r.rtspUser = rtspUser
        r.rtspPassword = rtspPassword ?? ProcessInfo.processInfo.environment["PIPCOMPOSE_RTSP_PASSWORD"]
        r.tlsCertificate = control.tlsCert
        r.tlsKey = control.tlsKey
        r.records = record
        r.recordResize = OutputSpec.ResizePolicy(rawValue: recordResize) ?? .fit
        r.pushes = push
        r.pipelines = pipeline
        return r
    }

    /// Every option, parsed and checked once; a bad value is a ValidationError with its rule.
    func settings() throws -> RunSettings {
        if let injectDrops {
            do { _ = try DropPattern.parse(injectDrops) } catch { throw ValidationError("--inject-drops: \(error)") }
        }
        guard (0...10_000).contains(injectDelayMs) else {
            throw ValidationError("--inject-delay-ms must be 0...10000, got \(injectDelayMs)")
        }
        guard (-5000...5000).contains(injectAvOffsetMs) else {
            throw ValidationError("--inject-av-offset-ms must be -5000...5000, got \(injectAvOffsetMs)")
        }
        guard OutputSpec.ResizePolicy(rawValue: recordResize) != nil else {
            throw ValidationError("--record-resize must be fit or split, got '\(recordResize)'")
        }
        for f in tickerFile where !f.contains("=") {
            throw ValidationError("--ticker-file takes ID=PATH, e.g. memo=news.txt; got '\(f)'")
        }
        guard (1...300).contains(webrtcConnectTimeout) else {
            throw ValidationError("--webrtc-connect-timeout must be 1...300 seconds, got \(webrtcConnectTimeout)")
        }
        guard (1...600).contains(webLoadTimeout) else {
            throw ValidationError("--web-load-timeout must be 1...600 seconds, got \(webLoadTimeout)")
        }
        guard (0...65536).contains(webRenewGrowth) else {
            throw ValidationError("--web-renew-growth must be 0...65536 MiB (0: never renew), got \(webRenewGrowth)")
        }
        guard (64...65536).contains(webMemoryLimit) else {
            throw ValidationError("--web-memory-limit must be 64...65536 MiB, got \(webMemoryLimit)")
        }
        guard (0...8).contains(maxRenditions) else {
            throw ValidationError("--max-renditions must be 0...8 (each is drawn and encoded while a browser sees it), got \(maxRenditions)")
        }
        guard (1...1000).contains(webrtcMaxViewers) else {
            throw ValidationError("--webrtc-max-viewers must be 1...1000, got \(webrtcMaxViewers)")
        }
        let specs: [OutputSpec], renditions: [Rendition], outputRenditions: [Int: (output: String, size: PixelSize)]
        do {
            specs = try outputs().specs()
            renditions = try rendition.map { text throws(OutputSpec.Invalid) in try Rendition.parse(text) }
            outputRenditions = try outputs().renditions()
        } catch { throw ValidationError("\(error)") }
        let audioChoice: AudioChoice?
        do { audioChoice = try audio.map { try AudioChoice.parse($0) } } catch { throw ValidationError("\(error)") }
        let codec: AudioCodec
        do { codec = try AudioCodec.parse(audioCodec) } catch { throw ValidationError("\(error)") }

        var options = LiveOptions(scene: try loadScene(scene), size: try size.value(), fps: rate.fps, outputs: specs)
        options.duration = duration.duration
        do {
            // The scene's renditions, and the command line's (which win for a size both name).
            let fromScene = options.scene.renditions.filter { r in !renditions.contains { $0.size == r.size } }
            options.renditions = try Rendition.checked(fromScene + renditions, main: options.size)
            options.hls = try hls.map { folder throws(OutputSpec.Invalid) in try HLSSettings.check(folder, window: hlsWindow) }
            for (i, named) in outputRenditions {
                if let r = try Rendition.resolve(named.size, output: named.output, in: options.renditions, main: options.size) {
                    options.outputRenditions[i] = r
                }
            }
        } catch { throw ValidationError("\(error)") }
        options.injectDrops = try injectDrops.map { try DropPattern.parse($0) }
        options.injectDelayMs = injectDelayMs
        options.audio = audioChoice ?? options.scene.audio
        options.injectAVOffsetMs = injectAvOffsetMs
        options.mkvAudioCodec = codec
        options.encoder = try encoder.settings()
        options.web.memoryLimit = webMemoryLimit << 20
        options.web.loadTimeout = webLoadTimeout
        options.web.renewGrowth = webRenewGrowth << 20
        let controlSettings = try control.settings()
        if webrtc, let c = controlSettings {
            options.webrtc = WebRTCSettings(maxViewers: webrtcMaxViewers, addresses: LocalAddresses.forICE(listeningOn: c.host))
            options.webrtc?.connectTimeout = webrtcConnectTimeout
            options.webrtc?.maxRenditions = maxRenditions
            options.webrtc?.ice = try ice.settings()
        } else if !(try ice.settings()).isEmpty {
            // Without viewers of its own, a run still uses STUN/TURN to reach WHIP servers.
            guard options.pushesWHIP else {
                throw ValidationError("--ice-server and --ice-public-ip are for WebRTC: add --webrtc (viewers) or --push whip+https://…")
            }
            options.whipIce = try ice.settings()
        }
        var s = RunSettings(options: options)
        s.control = controlSettings
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
        // Once, before anything of the run exists: GLib (2.74) then takes its slices from malloc, and glibc keeps no
        // per-thread caches of freed blocks (AllocatorSettings).
        AllocatorSettings.restartWithThem()
        let run = LiveRun(settings: try checked(settings), say: { say($0) }, log: { printLog($0) })
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
            if control.noControlToken {
                printWarning("--no-control-token: any program of any account on this machine can drive this run, read "
                             + "its picture and record files as you (inside --record-dir); web pages still cannot")
            }
            if webrtc, let page = started.pageURL {
                say("webrtc \(page) (watch link \(started.watchLink ?? "?"): it watches and nothing more; the page "
                    + "that drives: pipcompose ctl page; WHEP: POST \(url)/v1/whep)")
            }
        }
        if let url = started.rtspURL { say("serving \(url)") }
        if let user = rtspUser, started.rtspURL != nil {
            say("rtsp viewers log in as \(user) with a watch link's token as the password"
                + (started.watchToken.map { " (\(started.watchLink ?? "w1"): \($0))" } ?? "") + "; ctl link create makes more")
        }
        if let folder = run.settings.options.hls?.folder {
            say("hls \(folder)/master.m3u8" + (started.hlsURL.map { "; players: \($0)" } ?? ""))
        }
        for id in started.outputs { say("output \(id)") }
        for r in run.session.status.renditions {
            let carried = r.outputs.isEmpty ? "no output carries it" : r.outputs.joined(separator: ", ")
            say("rendition \(r.size) at \(r.bitrateKbps) kbit/s: \(carried)" + (r.url.map { "; serving \($0)" } ?? ""))
        }
        let o = run.settings.options
        say("\(o.size) at \(o.fps) fps; type 'resize WxH' + Enter to resize, Ctrl-C to stop")
        let ok = run.waitForEnd()
        say(LiveRun.summarize(run.session.status))
        if !ok {
            let named = run.session.unfinishedOutputs
            let one = named.count == 1
            throw UserError((named.isEmpty ? "some outputs" : named.joined(separator: ", "))
                            + " did not finish in time: " + (one ? "its file" : "their files") + " may lack "
                            + (one ? "its" : "their") + " end (one stuck in a write was left behind as far as it got; "
                            + "`pipcompose mend FILE` ends a recording on its last whole frame)")
        }
    }
}
