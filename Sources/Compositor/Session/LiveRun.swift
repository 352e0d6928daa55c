import Foundation

/// What `pipcompose run` was asked for besides the session itself: the control API, feeds, status lines.
public struct RunSettings: Sendable {
    public var options: LiveOptions
    /// Where the control API listens and whom it answers; nil for none.
    public var control: ControlSettings?
    /// Tickers fed from files, as (widget id, path).
    public var tickerFiles: [(id: String, path: String)] = []
    /// A ticker fed from standard input (which then takes no commands).
    public var tickerStdin: String?
    /// Follow media players over D-Bus (MPRIS), this one or the first there.
    public var mpris = true
    public var mprisPlayer: String?
    /// Seconds between status lines; 0 for none.
    public var statusEvery: Double = 0

    public init(options: LiveOptions) { self.options = options }
}

/// The control API of a run: its address and its access rules (`ControlAccess`, `RecordingPlace`).
public struct ControlSettings: Sendable {
    public enum Token: Sendable, Equatable {
        /// A new random token for this run (the default).
        case random
        /// The user's own (`--control-token`, `PIPCOMPOSE_CONTROL_TOKEN`).
        case given(String)
        /// None: loopback only (`--no-control-token`).
        case none
    }

    public var host: String
    public var port: Int
    public var token: Token = .random
    /// `--allow-host`, `--allow-origin`, `--metrics-open`.
    public var allowHosts: [String] = []
    public var allowOrigins: [String] = []
    public var metricsOpen = false
    /// `--record-dir`; empty: the folder `run` was started in.
    public var recordDirs: [String] = []
    /// `--tls-cert`, `--tls-key`: HTTPS, checked.
    public var tls: ControlTLS?
    /// `--auth-hook`, `--auth-hook-cache`.
    public var hook: AuthHookClient?

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// The rules these settings make, with `token` resolved (a random one made now).
    public func access() -> ControlAccess {
        let t: String?
        switch token {
        case .random: t = ControlToken.random()
        case .given(let g): t = g
        case .none: t = nil
        }
        return ControlAccess(token: t, hosts: ControlAccess.hosts(listeningOn: host, extra: allowHosts),
                             origins: Set(allowOrigins), metricsOpen: metricsOpen)
    }

    public func place() -> RecordingPlace {
        RecordingPlace(folders: recordDirs.isEmpty ? [FileManager.default.currentDirectoryPath] : recordDirs)
    }
}

/// One run of a live session, from start to the finalized files: starts the session, the control API and the
/// feeds; ends once, on the first of SIGINT/SIGTERM, the duration, or stdin closing, in a fixed order (frames,
/// encoders, outputs, then the control API). A second signal exits at once.
///
/// `@unchecked Sendable`: `stopping`/`result` are behind `lock`; the rest is set in `start()` before any of the
/// threads that read it (signals, stdin, status timer) begin.
public final class LiveRun: @unchecked Sendable {
    public let settings: RunSettings
    public let session: LiveSession
    private let log: @Sendable (String) -> Void
    private let say: @Sendable (String) -> Void
    private var server: ControlServer?
    private var tokenFile: String?
    private var feeds: [TickerFeed] = []
    private var stdinFeed: TickerFeed?
    private var mpris: MPRISFeed?
    private let lock = NSLock()
    private var stopping = false
    private var result = true
    private let done = DispatchSemaphore(value: 0)
    /// Signals are handled on a queue of their own: nothing else runs there, so a second Ctrl-C always ends the run
    /// (a status line that waited on a stuck page once held the signals' queue, and no Ctrl-C was heard).
    private let queue = DispatchQueue(label: "run-signals")
    private let statusQueue = DispatchQueue(label: "run-status")
    private var sources: [DispatchSourceSignal] = []
    private var statusTimer: DispatchSourceTimer?

    /// `say` prints to standard output (what scripts and tests read), `log` to standard error.
    public init(settings: RunSettings, say: @escaping @Sendable (String) -> Void, log: @escaping @Sendable (String) -> Void) {
        self.settings = settings
        self.say = say
        self.log = log
        session = LiveSession(options: settings.options, log: log)
    }

    /// Checks every pipeline; returns their text by name (what `--dump-pipeline` prints).
    public func prepare() throws -> [(String, String)] { try session.prepare() }

    /// What came up: printed by the command as `serving …`, `output …`, `control …`.
    public struct Started: Sendable {
        public var rtspURL: String?
        public var outputs: [String]
        public var controlURL: String?
        /// The live page's address with the watch link `run` makes (`/?token=…`): it watches, and nothing more.
        public var pageURL: String?
        /// That link's id, to revoke it (`ctl link revoke ID`), and its token (an RTSP viewer's password).
        public var watchLink: String?
        public var watchToken: String?
        /// Where the token is kept for `pipcompose ctl` (nil: no token, or it could not be written).
        public var tokenFile: String?
        /// The HLS ladder's master playlist as the control port serves it to players (`--hls`).
        public var hlsURL: String?
    }

    /// Starts everything; a failure stops what had started and is thrown.
    public func start() throws -> Started {
        stopOnSignals()
        if let c = settings.control {
            let s = try ControlServer(session: session, host: c.host, port: c.port, access: c.access(), place: c.place(),
                                      tls: c.tls, hook: c.hook)
            try s.start()
            server = s
            if let token = s.token {
                do { tokenFile = try ControlToken.store(token, port: s.boundPort) } catch {
                    log("warning: \(error); pipcompose ctl needs --token (or PIPCOMPOSE_CONTROL_TOKEN) to reach this run")
                }
            }
        }
        do { try session.start() } catch {
            stopServer()
            throw error
        }
        do {
            for f in settings.tickerFiles {
                let feed = try TickerFeed(session: session, widgetID: f.id)
                feed.watch(path: f.path)
                feeds.append(feed)
            }
            if let id = settings.tickerStdin { stdinFeed = try TickerFeed(session: session, widgetID: id) }
        } catch {
            finish(reason: "bad ticker feed")
            throw error
        }
        if settings.mpris { mpris = MPRISFeed.start(session: session, player: settings.mprisPlayer, log: log) }
        readStandardInput()
        if settings.statusEvery > 0 { printStatus(every: settings.statusEvery) }
        if settings.options.duration != nil {
            DispatchQueue.global().async { [self] in
                session.waitUntilFinished()
                finish(reason: "duration reached")
            }
        }
        if let server { session.admit(watchLinks: server.links) }
        // The page and the HLS ladder are given to viewers: their URLs carry a watch link, never the control token.
        let watch = try? server?.links.create(label: "printed by run")
        let hlsURL = settings.options.hls == nil ? nil
            : server.map { $0.url + "/hls/" + (watch.map { $0.token + "/" } ?? "") + "master.m3u8" }
        return Started(rtspURL: session.rtspURL, outputs: session.outputIDs, controlURL: server?.url,
                       pageURL: server.map { ControlServer.pageURL(base: $0.url, token: watch?.token) },
                       watchLink: watch?.id, watchToken: watch?.token, tokenFile: tokenFile, hlsURL: hlsURL)
    }

    /// Blocks until the run has ended and every file is finalized; false if some output did not finish in time.
    public func waitForEnd() -> Bool {
        done.wait()
        feeds.forEach { $0.stop() }
        mpris?.stop()
        return lock.withLock { result }
    }

    /// Ends the run (once; later calls do nothing).
    public func finish(reason: String) {
        let first = lock.withLock { () -> Bool in
            defer { stopping = true }
            return !stopping
        }
        guard first else { return }
        log("\(reason): finalizing outputs…")
        statusTimer?.cancel()
        let ok = session.stop()
        stopServer()
        lock.withLock { result = ok }
        done.signal()
    }

    /// Stops the control API and takes its token file away (a later run on the port writes its own).
    private func stopServer() {
        server?.stop()
        if let server, let token = server.token, tokenFile != nil { ControlToken.remove(token, port: server.boundPort) }
    }

    private func stopOnSignals() {
        // A recording into a FIFO (or a --pipeline writing into a pipe) whose reader goes away: its write fails with
        // EPIPE and that output fails alone, instead of SIGPIPE ending the process and every other output with it.
        signal(SIGPIPE, SIG_IGN)
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let src = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            src.setEventHandler { [weak self] in
                guard let self else { return }
                if self.lock.withLock({ self.stopping }) {
                    self.log("second signal: exiting without finalizing")
                    exit(130)
                }
                DispatchQueue.global().async { self.finish(reason: sig == SIGINT ? "interrupted" : "terminated") }
            }
            src.resume()
            sources.append(src)
        }
    }

    /// The status as one block of text: the frame counters, then each output.
    public static func describe(_ s: LiveSession.Status) -> String {
        var text = "status: \(s.size) frame \(s.frame) rendered \(s.rendered) repeated \(s.repeated) "
            + "dropped \(s.dropped) viewers \(s.viewers)"
        if let e = s.earlier { text += "\n  " + earlierLine(e) }
        for o in s.outputs { text += "\n  \(o.id): \(o.state), \(o.delivered) frames, \(o.bytes) bytes, dropped \(o.dropped)" }
        for r in s.renditions {
            text += "\n  rendition \(r.size): drawn \(r.frames) encoded \(r.encoded), "
                + (r.outputs.isEmpty ? "no output (not drawn)" : r.outputs.joined(separator: ", "))
        }
        return text
    }

    /// The outputs that ended before the newest ones that did, as one line.
    static func earlierLine(_ e: LiveSession.Status.Earlier) -> String {
        "\(e.outputs) earlier output\(e.outputs == 1 ? "" : "s") (ended): \(e.delivered) frames, \(e.bytes) bytes, dropped \(e.dropped)"
    }

    /// The end-of-run summary: frames, drops by cause, each output, and the injected delay as really held.
    public static func summarize(_ s: LiveSession.Status) -> String {
        var text = "stopped after \(s.frame + 1) frames: rendered \(s.rendered), repeated \(s.repeated), "
            + "encoded \(s.encoded), dropped \(s.dropped) (late \(s.late), at the encoder \(s.encoderDropped))"
            + (s.injected > 0 ? ", left out on purpose \(s.injected)" : "")
            + (s.idle > 0 ? ", idle \(s.idle) (nobody watched: not drawn)" : "")
            + (s.unpooled > 0 ? ", \(s.unpooled) in buffers of their own (an encoder held the pool's)" : "")
        if let e = s.earlier { text += "\n" + earlierLine(e) }
        for o in s.outputs {
            // A failed output's file holds what was written whole before the failure, which may be fewer frames.
            let failed = switch PipelineOutput.State(rawValue: o.state) {
            case .failed: "failed after "
            case .stuck: "stuck (left behind) after "
            default: ""
            }
            text += "\n\(o.id): \(failed)\(o.delivered) frames, \(o.bytes) bytes, dropped \(o.dropped)"
            // A push that failed and came back, or was still waiting to retry: its counts are what it was handed.
            if let f = o.failures, failed.isEmpty { text += "; " + f.summary }
        }
        if let a = s.audio { text += "\naudio \(a.choice): \(a.packets) AAC packets, \(a.dropped) sample chunks dropped" }
        if let m = s.music {
            let late = Int((Double(s.musicGapFrames) / Double(AudioTrack.rate) * 1000).rounded())
            text += "\nmusic: file \(m.index + 1) of \(s.musicFiles) '\(m.file.displayTitle)' at "
                + String(format: "%.1f s", m.position) + ", \(late) ms of silence where the decoder was late"
        }
        if let h = s.delayHeld {
            text += String(format: "\ndelay held (--inject-delay-ms): min %.2f ms, p50 %.2f ms, p99 %.2f ms, max %.2f ms, %d frames",
                           h.min, h.p50, h.p99, h.max, h.samples)
        }
        return text
    }

    private func printStatus(every seconds: Double) {
        let t = DispatchSource.makeTimerSource(queue: statusQueue)
        t.schedule(deadline: .now() + seconds, repeating: seconds)
        t.setEventHandler { [weak self] in
            guard let self else { return }
            self.say(Self.describe(self.session.status))
        }
        t.resume()
        statusTimer = t
    }

    /// Standard input: ticker items for `tickerStdin`, else console commands (`ConsoleCommand`).
    private func readStandardInput() {
        let t = Thread { [self] in
            while let line = readLine() {
                if let feed = stdinFeed {
                    feed.append(line)
                    continue
                }
                switch ConsoleCommand.parse(line) {
                case .status: say(Self.describe(session.status))
                case .resize(let size): session.requestResize(size)
                case .unknown(let message): log("warning: \(message)")
                case .empty: break
                }
            }
        }
        t.name = "stdin"
        t.start()
    }
}
