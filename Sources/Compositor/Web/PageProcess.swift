import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One web widget's page, kept running in a process of its own (`pipcompose web-page`, an `IsolatedProcess`), and
/// watched: a process that ends (a crash), a page that stops answering (a script that never returns: the wrapper's
/// heartbeat shares the page's thread), that passes the memory limit, that never finishes loading or navigates away
/// is taken down and started again with backoff (1 s, doubling, at most 30 s), with `widgetFailed` and, at its next
/// frame, `widgetRecovered`. Meanwhile the widget shows its last good frame: nothing here ever makes the frame loop
/// wait.
///
/// Renewal: WebKit's processes grow with every repaint (about 0.5 MiB a minute for a page that changes 10 times a
/// second, the same in a plain wpesrc pipeline: WebKit's or Mesa's, not ours). Once a page has stayed more than
/// `renewGrowth` over what it used when it had settled, a second launch of it is started beside it, loads with what
/// the page was told (`PageReplay`, and the calls made meanwhile), and takes its place once it has drawn, settled
/// and answered a ping; the first is ended then. Viewers see no gap: the widget shows the first launch's pictures
/// until the second's newest replaces them. A page's own state that no call carries (a counter it keeps) starts
/// over, as after a crash: `renew: false` (the widget's) or `--web-renew-growth 0` (every page's) turns renewal off.
///
/// `@unchecked Sendable`: the state below is owned by `queue`; `frames` is thread-safe; the reader threads only
/// touch `frames` and post to `queue`.
///
/// One concern in one file, longer than 420 lines on purpose: the watchdog, the restarts and the renewal read and
/// write the same launch state (generation, slot, process, memory), owned by one queue, and a renewal is a restart
/// that keeps the old launch until the new one has drawn; split apart, every field would lose its `private`.
final class PageProcess: @unchecked Sendable {
    enum State: String, Sendable { case starting, playing, failed, stopped }

    /// What `status` shows of a page.
    struct Status: Sendable {
        var id: String
        var state: State
        var frames: UInt64
        var restarts: Int
        var memoryBytes: Int
        var lastError: String?
        var size: PixelSize?
        /// Pictures WebKit drew that this launch of the page took (nil where they cannot be counted).
        var webkitFrames: UInt64?
        /// Times a new launch of the page took the place of one that had grown.
        var renewals: Int
        /// A new launch started beside the page to take its place, now: "starting", "loaded" or "drawn"; nil for none.
        var renewing: String?
    }

    /// How a call into the page ended.
    enum CallOutcome: Sendable, Equatable {
        case done
        /// Sent to a page of another origin as a `message` event: it cannot say whether it did anything.
        case posted
        case failed(String)
        /// The page did not say within the time given (it may still do it).
        case noAnswer
        case notRunning(String)
    }

    struct Settings: Sendable {
        var executable: String
        var fps: Int
        var viewport: PixelSize
        var memoryLimit: Int
        /// Growth in bytes over the settled page's memory that starts a renewal; 0: never.
        var renewGrowth: Int = 0
        /// A page whose heartbeat stops this long is taken down; the first one may take `firstAnswer`.
        var answerTimeout: Double = 10
        var firstAnswer: Double = 30
        /// A page from elsewhere (`source: http…`): how its server answered is asked here once it loaded (see
        /// `checkAnswer`); nil for a page of the scene, whose wrapper asks.
        var remote: String?
        /// On the scene's clock (`pipcompose render`): the page moves only when stepped (`step`), and its process
        /// hands over one picture a step.
        var stepped = false
        /// The scene's frame rate (a stepped page's frame f is at f × 1000 ÷ this ms).
        var sceneFPS = 30
    }

    let id: String
    let frames = PageFrames()
    /// Where a stepped page has got to, and the step it is to take next.
    let steps = PageSteps()
    let board: StepBoard
    /// What the page was told, for the page started again.
    let replay: PageReplay
    private let server: PageServer
    private var settings: Settings
    private let onEvent: @Sendable (SessionEvent) -> Void
    private let queue: DispatchQueue
    private var process: IsolatedProcess?
    /// The launch whose frames and messages count (a number no other launch had).
    private var generation = 0
    private var serial = 0
    /// Which of the page server's two names the running launch is served and reports under.
    private var slot = 0
    private var state = State.starting
    private var startedAt = Date()
    private var lastAnswer: Date?
    private var retryAt: Date?
    private var backoff = Backoff(first: 1, limit: 30)
    private var restarts = 0
    private var failedBefore = false
    private var framesIn: UInt64 = 0
    /// When the page last said it loaded, and its last frame came.
    private var loadedAt: Date?
    /// What the page had been told when this launch started: a call made while it loads finds no page to take it,
    /// and is told again once it has loaded (`catchUp`).
    private var toldAtLaunch: (data: String?, playing: Bool, version: Int)?
    private var lastFrame: Date?
    /// When this launch's process last said anything (its heartbeat comes each second, from a thread of its own: a
    /// process stopped, or hung in a crash handler, says nothing, while WebKit's processes may go on answering).
    private var lastHeard: Date?
    private var lastError: String?
    /// What this launch of the page's process said last of an error (its standard error, or its messages).
    private var childError: String?
    private var memory = 0
    /// Pictures WebKit drew that this launch took, as its process last said.
    private var handed: UInt64 = 0
    /// What WebKit is told to load: a page that shows another address went elsewhere.
    private var location = ""
    private var timer: DispatchSourceTimer?
    private var calls: [Int: @Sendable (CallOutcome) -> Void] = [:]
    private var nextCall = 1
    /// The state `window.pipcompose` shows (size, viewers, playing), as JSON, for a page started again.
    private var pageState = "{}"
    /// The memory the running launch used once it had settled, the launch started to replace it, the renewals
    /// done, and when a renewal that did not work may be tried again.
    private var settledMemory: Int?
    /// The memory of the last `renewWindow` seconds since then: a renewal starts when all of it is past the growth
    /// allowed (memory that rises for a moment and falls back, a script's garbage collected, starts none).
    private var recentMemory: [Int] = []
    static let renewWindow = 20
    private var successor: Successor?
    /// What the launch started to take the page's place said last of an error.
    private var successorError: String?
    private var renewals = 0
    private var renewAfter = Date.distantPast

    /// A launch of the page started beside the running one, to take its place.
    private struct Successor {
        let process: IsolatedProcess
        let generation: Int
        let slot: Int
        let route: FrameRoute
        let location: String
        let startedAt = Date()
        /// What the page had been told when this launch started: what changed after it is told once it loaded.
        let told: (data: String?, playing: Bool, version: Int)
        var loadedAt: Date?
        var lastAnswer: Date?
        /// When its process last said anything (its own heartbeat comes each second).
        var lastHeard: Date?
        /// Asked, once it had drawn and settled, to answer (`{"ping": generation}`): it is swapped in on the answer,
        /// so a launch that stopped (or hangs) is never swapped in for the page.
        var pinged: Date?
        /// Its output ended (or stopped in the middle of a frame for `midMessage`): given up at the next second, when
        /// its end (and the signal) can be told.
        var outputEnded = false
        var lastFrame: Date?
        var framesSinceLoad = 0
        var memory = 0
    }

    /// The name the page server knows a launch of widget `id` by: each of the two launches a renewal runs at once
    /// reports under its own (widget ids have no '~').
    static func name(of id: String, slot: Int) -> String { slot == 0 ? id : id + "~\(slot)" }

    init(id: String, server: PageServer, settings: Settings, replay: PageReplay = PageReplay(data: nil),
         onEvent: @escaping @Sendable (SessionEvent) -> Void) {
        self.id = id
        self.replay = replay
        self.server = server
        self.settings = settings
        self.onEvent = onEvent
        board = StepBoard(fps: settings.sceneFPS)
        queue = DispatchQueue(label: "web-\(id)")
        frames.onWanted = { [weak self] size in
            guard let self else { return }
            queue.async { self.resize(to: size) }
        }
    }

    /// Starts the page and its watchdog.
    func start() {
        queue.async { [self] in
            launch()
            let t = DispatchSource.makeTimerSource(queue: queue)
            t.schedule(deadline: .now() + 1, repeating: 1)
            t.setEventHandler { [weak self] in self?.watch() }
            t.resume()
            timer = t
        }
    }

    /// Ends the page for good (the run is over).
    func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
            state = .stopped
            steps.fail("the run stopped")
            board.close()
            generation = fresh()
            process?.kill()
            process = nil
            abandonSuccessor()
            for (_, done) in calls { done(.notRunning("stopped")) }
            calls = [:]
        }
    }

    var status: Status {
        queue.sync {
            Status(id: id, state: state, frames: framesIn, restarts: restarts, memoryBytes: memory,
                   lastError: lastError, size: frames.wantedSize, webkitFrames: handed > 0 ? handed : nil,
                   renewals: renewals,
                   renewing: successor.map { $0.framesSinceLoad > 0 ? "drawn" : $0.loadedAt != nil ? "loaded" : "starting" })
        }
    }

    /// The page's report from its wrapper (PageServer), under the name of `slot`.
    func report(_ r: [String: JSONValue], slot: Int) {
        queue.async { [self] in
            guard state == .starting || state == .playing else { return }
            guard slot == self.slot else { return successorReport(r, slot: slot) }
            guard case .string(let kind)? = r["kind"] else { return }
            switch kind {
            case "alive": lastAnswer = Date()
            case "loaded":
                lastAnswer = Date()
                loadedAt = Date()
                if settings.stepped { steps.loaded() }
                if let told = toldAtLaunch, let process { catchUp(process, told: told) }
                checkAnswer()
            case "fail": fail(r.text("reason") ?? "the page failed")
            case "stepped":
                // WebKit has drawn the step: its process hands over the next picture it takes.
                if case .number(let n)? = r["frame"] { process?.send("{\"grab\":\(Int64(n))}") }
            case "error": onEvent(.pageError(id: id, message: r.text("message") ?? "an error"))
            case "called":
                guard case .number(let n)? = r["id"], let done = calls.removeValue(forKey: Int(n)) else {
                    if let e = r.text("error") { onEvent(.pageError(id: id, message: e)) }
                    return
                }
                if let e = r.text("error") { done(.failed(e)) } else if r["posted"] != nil { done(.posted) } else { done(.done) }
            default: break
            }
        }
    }

    /// Calls `name(argument)` on the page (a CasparCG template's `update`, `play`…) and waits up to `timeout` for it
    /// to say how that went, off the caller's thread (the answer comes through the page server, whose requests may
    /// be served by the thread that asked).
    func call(_ name: String, _ argument: String?, timeout: Double = 3) async -> CallOutcome {
        await withCheckedContinuation { done in
            DispatchQueue.global().async { done.resume(returning: self.callWaiting(name, argument, timeout: timeout)) }
        }
    }

    private func callWaiting(_ name: String, _ argument: String?, timeout: Double) -> CallOutcome {
        let done = DispatchSemaphore(value: 0)
        /// `@unchecked Sendable`: written before `done` is signalled, read after the wait.
        final class Box: @unchecked Sendable { var outcome = CallOutcome.noAnswer }
        let box = Box()
        let number = queue.sync { () -> Int? in
            guard state == .playing || state == .starting, let process else { return nil }
            let n = nextCall
            nextCall += 1
            calls[n] = { outcome in
                box.outcome = outcome
                done.signal()
            }
            let arg = argument.map(PageWrapper.literal) ?? "undefined"
            replay.called(name, argument)
            let line = Self.command(js: "window.__pc && __pc.call(\(n), \(PageWrapper.literal(name)), \(arg))")
            process.send(line)
            // A launch about to take the page's place gets the call too, once it has loaded (before, it is given
            // what it missed when it loads).
            if successor?.loadedAt != nil { successor?.process.send(line) }
            return n
        }
        guard let number else {
            return .notRunning(queue.sync { lastError.map { "the page is not running: \($0)" } ?? "the page is not running" })
        }
        if done.wait(timeout: .now() + timeout) == .timedOut {
            queue.sync { _ = calls.removeValue(forKey: number) }
            return .noAnswer
        }
        return box.outcome
    }

    /// Waits until the page has loaded (its data handed over, `play()` called) and drawn since, and then until it
    /// has not drawn for `quiet` seconds (an animation in has settled) or `settle` seconds have passed (a page that
    /// never stops moving); or `timeout` passes. True when it drew. For a snapshot.
    func waitUntilDrawn(timeout: Double, quiet: Double = 0.4, settle: Double = 2) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let drawn = queue.sync { () -> Bool in
                guard let loadedAt, let lastFrame, lastFrame >= loadedAt else { return false }
                let now = Date()
                return now.timeIntervalSince(lastFrame) >= quiet || now.timeIntervalSince(loadedAt) >= settle
            }
            if drawn { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return queue.sync { lastFrame != nil }
    }

    /// On the scene's clock: the page is to move to frame `n` (`ms` scene milliseconds), calling the functions in
    /// `calls` first, in order, in the same task. `waitForStep` waits for its picture: several pages step at once.
    func beginStep(_ n: Int64, ms: Double, calls: [(name: String, argument: String?)] = []) {
        board.post(frame: n, ms: ms, calls: calls)
    }

    /// Waits until the picture of frame `n` is in `frames` (`beginStep`). WPE WebKit 2.38 at times stops drawing a
    /// page for good (its animation frames never come again; seen about once in 300 steps with two pages or a busy
    /// machine, and nothing sent to it from outside brought it back): a page that has not drawn its step for `stall`
    /// seconds (a step takes 20–60 ms here), or whose process ended, is started again, and replays the render's
    /// frames before this one without drawing them (`StepBoard`), which gives a page on the scene's clock the same
    /// state. At most `attempts` times a step.
    func waitForStep(_ n: Int64, timeout: Double, stall: Double = 1, attempts: Int = 3) throws(PageStepError) {
        var left = attempts
        do {
            try steps.wait(for: n, timeout: timeout, page: id, stall: stall) {
                guard left > 0 else { return false }
                left -= 1
                restartForSteps(at: n)
                return true
            }
        } catch {
            let why = queue.sync { lastError }
            throw PageStepError(description: error.description + (why.map { " (last: \($0))" } ?? ""))
        }
    }

    /// A stepped page that stopped drawing, or whose process ended, is started again at once (not after the
    /// watchdog's backoff: the render waits for it).
    private func restartForSteps(at n: Int64) {
        queue.async { [self] in
            guard state != .stopped else { return }
            retryAt = nil
            generation = fresh()
            process?.kill()
            process = nil
            self.restarts += 1
            onEvent(.pageError(id: id, message: "the page stopped drawing at frame \(n); started again, "
                               + "its frames before replayed"))
            launch()
        }
    }

    /// Loads the page again in its frame (its scripts start over; the process stays).
    func reload() {
        queue.async { [self] in process?.send(Self.command(js: "window.__pc && __pc.reload()")) }
    }

    /// What `window.pipcompose` tells the page (size, viewers, playing, now playing), as a JSON object.
    func tell(_ json: String) {
        queue.async { [self] in
            guard json != pageState else { return }
            pageState = json
            let line = Self.command(js: "window.__pc && __pc.state(\(json))")
            process?.send(line)
            successor?.process.send(line)
        }
    }

    // MARK: - On `queue`

    private func fresh() -> Int {
        serial += 1
        return serial
    }

    private func launch() {
        abandonSuccessor()
        generation = fresh()
        state = .starting
        startedAt = Date()
        lastAnswer = nil
        lastHeard = nil
        loadedAt = nil
        childError = nil
        handed = 0
        settledMemory = nil
        recentMemory = []
        toldAtLaunch = replay.versioned
        guard let (p, l) = spawn(slot: slot, generation: generation, route: FrameRoute(frames)) else { return }
        process = p
        location = l
    }

    /// Starts a launch of the page under the name of `slot`, its frames going where `route` says; nil when the
    /// process could not be started (the page failed).
    private func spawn(slot: Int, generation g: Int, route: FrameRoute) -> (IsolatedProcess, String)? {
        let name = Self.name(of: id, slot: slot)
        let size = frames.pageSize ?? settings.viewport
        server.setSize(size, of: name)
        var environment = ProcessInfo.processInfo.environment
        // Software GL (Mesa's llvmpipe): no GPU or display needed. Not "true": with that exact value wpesrc 1.22
        // fixates its own 1920x1080 caps and ignores the size asked for (not-negotiated).
        if environment["LIBGL_ALWAYS_SOFTWARE"] == nil { environment["LIBGL_ALWAYS_SOFTWARE"] = "1" }
        // A crash in the page's process (wpesrc 1.22 reads a dead web process's buffer: SIGSEGV) ends it at once, and
        // it is started again: Swift's crash reporter would hold it and its pipes for minutes while it read the
        // 90 MB binary's symbols, on a machine that has a stream to make. SWIFT_BACKTRACE set by the user is theirs.
        if environment["SWIFT_BACKTRACE"] == nil { environment["SWIFT_BACKTRACE"] = "enable=no" }
        let location = server.pageURL(name)
        let p: IsolatedProcess
        do {
            p = try IsolatedProcess(executable: settings.executable, arguments: [
                "web-page", "--location", location,
                "--viewport", "\(settings.viewport.width)x\(settings.viewport.height)",
                "--size", "\(size.width)x\(size.height)",
                // A stepped page's pictures are taken as soon as it drew (120 a second: a step waits for two of
                // WebKit's frames and one more of wpesrc's), not at the scene's rate.
                "--fps", String(settings.stepped ? 120 : settings.fps),
            ] + (settings.stepped ? ["--stepped"] : []), environment: environment)
        } catch {
            if g == generation { fail("\(error)") }
            return nil
        }
        let read = Thread { [weak self] in self?.read(p, generation: g, route: route) }
        read.name = "web-\(id)-frames"
        read.start()
        let errors = Thread { [weak self] in
            p.readErrors { line in
                // What the process said of a crash or a failure, for the reason given when it ends.
                let l = line.lowercased()
                guard l.contains("fatal") || l.contains("crash") || l.contains("error") || l.contains("abort") else { return }
                // Swift's crash report names the crash first ("💣 Program crashed: …"), then each thread's stack
                // ("Thread 3 crashed:"), which says less.
                guard !(l.hasPrefix("thread ") && l.hasSuffix("crashed:")) else { return }
                self?.queue.async { [weak self] in
                    guard let self else { return }
                    if g == generation { childError = line } else if g == successor?.generation { successorError = line }
                }
            }
        }
        errors.name = "web-\(id)-stderr"
        errors.start()
        return (p, location)
    }

    /// How long the rest of a frame or message may take once its head came: a process that stops in the middle (held
    /// by a crash handler, whose own process keeps the pipe open) would otherwise hold the frame route, and with it
    /// a renewal's promotion and the page's queue, for good.
    static let midMessage: TimeInterval = 5

    /// On its own thread: frames where `route` says, messages to `queue`, until the process's output ends (or stops
    /// in the middle of a frame or message).
    private func read(_ p: IsolatedProcess, generation g: Int, route: FrameRoute) {
        var head: [UInt8] = []
        var payload: [UInt8] = []
        while p.read(16, into: &head), let h = PageWire.parse(head: Array(head.prefix(16))) {
            switch h.kind {
            case .frame, .opaqueFrame:
                guard h.a > 0, h.b > 0, h.a * h.b <= PageWire.maxPixels else { break }
                let size = PixelSize(width: h.a, height: h.b), row = size.width * 4
                // A frame of neither the widget's size nor the coming one (an old one, during a resize) is read and
                // left out. Else straight from the pipe into the surface the widget will draw: no copy in between.
                let whole = route.with { frames -> Bool? in
                    guard frames.accepts(size) else { return nil }
                    return frames.put(size: size, opaque: h.kind == .opaqueFrame) { dst, stride in
                        if stride == row { return p.read(row * size.height, to: dst, within: Self.midMessage) }
                        return (0..<size.height).allSatisfy { y in p.read(row, to: dst + y * stride, within: Self.midMessage) }
                    }
                }
                guard let whole else {
                    guard p.read(row * size.height, into: &payload, within: Self.midMessage) else { break }
                    continue
                }
                guard whole else { break }
                queue.async { [self] in framed(generation: g) }
            case .message:
                guard h.a <= 1 << 20, p.read(h.a, into: &payload, within: Self.midMessage) else { break }
                let message = try? JSONDecoder().decode([String: JSONValue].self, from: Data(payload.prefix(h.a)))
                // One hand-over per message, each second's heartbeat included: every block handed from this thread
                // to the queue's leaves its continuation in the cache of the thread that ran it (libdispatch keeps up
                // to 1024 a thread), and three a heartbeat filled those caches for ten minutes of a run.
                queue.async { [self] in heard(message, generation: g) }
            }
        }
        queue.async { [self] in
            if g == successor?.generation {
                successor?.outputEnded = true
                return
            }
            guard g == generation, state == .starting || state == .playing else { return }
            // (Its output ends a moment before it can be reaped: asked once, and else not said.)
            let how = process?.ended == true ? process?.endedBy.map { " by \($0)" } : nil
            fail("its process ended" + (how ?? "") + (childError.map { " (\($0.prefix(200)))" } ?? (how == nil ? " (a crash?)" : "")))
        }
    }

    /// On the queue: a message of launch `g`'s process, in the order its parts were once handed over one by one (each
    /// asks again whether `g` is the page's launch: what one part does, a failure, may end it).
    private func heard(_ message: [String: JSONValue]?, generation g: Int) {
        if g == generation { lastHeard = Date() } else if g == successor?.generation { successor?.lastHeard = Date() }
        if let e = message?.text("error"), g == generation { childError = e }
        if let uri = message?.text("uri"), g == generation { shows(uri) }
        // (After the picture it follows, which is in `frames` already.)
        if case .number(let n)? = message?["grabbed"], g == generation { steps.grabbed(Int64(n)) }
        if case .number(let n)? = message?["pong"], Int(n) == g { answered(generation: g) }
        if case .number(let n)? = message?["handed"], g == generation { handed = UInt64(max(0, n)) }
    }

    /// The address WebKit shows now (its process says so each second): another than the page's (its fragment aside)
    /// means the page navigated away, and it is started again at its own.
    private func shows(_ uri: String) {
        func bare(_ u: String) -> Substring { u.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }
        guard !uri.isEmpty, !location.isEmpty, bare(uri) != bare(location) else { return }
        fail("the page went to \(uri)")
    }

    private func framed(generation g: Int) {
        if g == successor?.generation {
            successor?.lastFrame = Date()
            if successor?.loadedAt != nil { successor?.framesSinceLoad += 1 }
            return
        }
        guard g == generation else { return }
        framesIn += 1
        lastFrame = Date()
        if state == .starting {
            state = .playing
            if failedBefore {
                failedBefore = false
                onEvent(.widgetRecovered(id: id, restarts: restarts))
            }
            backoff.reset()
        }
    }

    private func watch() {
        let now = Date()
        switch state {
        case .starting, .playing:
            guard let process else { return }
            memory = process.residentBytes()
            if memory > settings.memoryLimit {
                return fail("it used \(memory >> 20) MiB, over --web-memory-limit \(settings.memoryLimit >> 20) MiB")
            }
            if process.ended {
                return fail("its process ended by \(process.endedBy ?? "itself")"
                            + (childError.map { " (\($0.prefix(200)))" } ?? ""))
            }
            let since = lastAnswer ?? startedAt
            let limit = lastAnswer == nil ? settings.firstAnswer : settings.answerTimeout
            if now.timeIntervalSince(since) > limit {
                return fail(lastAnswer == nil ? "the page did not start within \(Int(limit)) s"
                            : "the page does not answer (a script that never returns?) for \(Int(limit)) s")
            }
            // The page answers (WebKit's processes run), but its process stopped reading what it is sent, or saying
            // anything: stopped, or hung (a crash handler holds every thread of a process while it writes its report).
            if process.stuck {
                return fail("its process took nothing it was sent for \(Int(IsolatedProcess.sendTimeout)) s "
                            + (childError.map { "(\($0.prefix(200)))" } ?? "(stopped, or hung?)"))
            }
            let heard = lastHeard ?? startedAt
            // (Its first word may take as long as a page's first answer, and never less than 30 s: a busy machine
            // starts a process slowly.)
            if now.timeIntervalSince(heard) > (lastHeard == nil ? max(settings.firstAnswer, 30) : settings.answerTimeout) {
                return fail("its process said nothing for \(Int(now.timeIntervalSince(heard))) s "
                            + (childError.map { "(\($0.prefix(200)))" } ?? "(stopped, or hung?)"))
            }
            watchRenewal(now: now)
        case .failed:
            if let retryAt, now >= retryAt { launch() }
        case .stopped:
            break
        }
    }

    /// A page from elsewhere is in a frame of the wrapper's document, whose script cannot see how its server
    /// answered (another origin): an error page (404, 500…) would be shown as if it were the page. Asked here once
    /// it loaded; an answer of 400 or more fails it, in the words a missing page of the scene gets. On `queue`.
    private func checkAnswer() {
        guard let remote = settings.remote, let url = URL(string: remote), ["http", "https"].contains(url.scheme ?? "")
        else { return }
        let asked = generation
        let request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 10)
        URLSession.shared.dataTask(with: request) { [weak self] _, response, _ in
            guard let self, let status = (response as? HTTPURLResponse)?.statusCode, status >= 400 else { return }
            self.queue.async {
                guard self.generation == asked else { return }
                self.fail("the page answered \(status) (\(remote))")
            }
        }.resume()
    }

    private func fail(_ reason: String) {
        guard state == .starting || state == .playing else { return }
        // A stepped page that had loaded is started again by the render's wait (`waitForStep`), and replays.
        let replays = settings.stepped && loadedAt != nil
        if settings.stepped && !replays { steps.fail(reason) }
        generation = fresh()
        process?.kill()
        process = nil
        abandonSuccessor()
        state = .failed
        lastError = reason
        restarts += 1
        failedBefore = true
        let delay = backoff.failed()
        retryAt = replays ? nil : Date().addingTimeInterval(delay)
        for (_, done) in calls { done(.failed("the page failed: \(reason)")) }
        calls = [:]
        onEvent(.widgetFailed(id: id, reason: reason, retryInSeconds: delay))
    }

    private func resize(to size: PixelSize) {
        // A launch about to take the page's place was made for the old size: it is given up, and tried again later.
        if successor != nil { abandonSuccessor(retryIn: 10) }
        for slot in 0...1 { server.setSize(size, of: Self.name(of: id, slot: slot)) }
        if size.width > settings.viewport.width || size.height > settings.viewport.height {
            // Beyond the viewport WebKit renders: a bigger one, and the page starts again (its state is lost).
            settings.viewport = PixelSize(width: max(size.width, settings.viewport.width),
                                          height: max(size.height, settings.viewport.height))
            generation = fresh()
            process?.kill()
            process = nil
            launch()
            return
        }
        process?.send("{\"size\":[\(size.width),\(size.height)]}")
    }

    // MARK: - Renewal, on `queue`

    /// Each second while the page runs: notes what it used once settled (10 s after it loaded), starts a launch
    /// beside it once it stayed past `renewGrowth` over that for `renewWindow` seconds, and swaps the two once the
    /// new one has drawn and settled.
    private func watchRenewal(now: Date) {
        guard settings.renewGrowth > 0, state == .playing else { return }
        if settledMemory == nil, let loadedAt, now.timeIntervalSince(loadedAt) >= 10 { settledMemory = memory }
        guard var s = successor else {
            guard let settled = settledMemory else { return }
            recentMemory.append(memory)
            if recentMemory.count > Self.renewWindow { recentMemory.removeFirst() }
            if recentMemory.count == Self.renewWindow, recentMemory.min()! > settled + settings.renewGrowth,
               now >= renewAfter {
                renew()
            }
            return
        }
        s.memory = s.process.residentBytes()
        successor = s
        if s.memory > settings.memoryLimit {
            return giveUpSuccessor("used \(s.memory >> 20) MiB, over --web-memory-limit \(settings.memoryLimit >> 20) MiB")
        }
        if s.process.ended { return giveUpSuccessor("ended by " + (s.process.endedBy ?? "itself")) }
        if s.outputEnded {
            return giveUpSuccessor("stopped sending (it stalled in the middle of a picture, or closed its output)")
        }
        if s.process.stuck {
            return giveUpSuccessor("took nothing it was sent for \(Int(IsolatedProcess.sendTimeout)) s (stopped, or hung?)")
        }
        // Its process's own heartbeat, as the watchdog asks of the running launch: a launch stopped (or held by a
        // crash handler) is still, and would otherwise look settled.
        let heard = s.lastHeard ?? s.startedAt
        if now.timeIntervalSince(heard) > (s.lastHeard == nil ? max(settings.firstAnswer, 30) : settings.answerTimeout) {
            return giveUpSuccessor("said nothing for \(Int(now.timeIntervalSince(heard))) s (stopped, or hung?)")
        }
        guard let loaded = s.loadedAt else {
            if now.timeIntervalSince(s.startedAt) > settings.firstAnswer {
                giveUpSuccessor("did not load within \(Int(settings.firstAnswer)) s")
            }
            return
        }
        // Drawn since it loaded, and still for a moment (an animation in has ended) or for long enough.
        guard s.framesSinceLoad > 0, let last = s.lastFrame else {
            if now.timeIntervalSince(loaded) > settings.firstAnswer {
                giveUpSuccessor("drew nothing within \(Int(settings.firstAnswer)) s of loading")
            }
            return
        }
        if let pinged = s.pinged {
            // (Its commands wait on WebKit's own thread: a page process whose heartbeat goes on may still hang there.)
            if now.timeIntervalSince(pinged) > settings.answerTimeout {
                giveUpSuccessor("did not answer for \(Int(now.timeIntervalSince(pinged))) s (hung?)")
            }
            return
        }
        guard now.timeIntervalSince(last) >= 0.4 || now.timeIntervalSince(loaded) >= 3 else { return }
        s.pinged = now
        successor = s
        s.process.send("{\"ping\":\(s.generation)}")
    }

    /// The new launch answered the ping it was sent once settled (`{"pong": generation}`): it runs, and takes the
    /// page's place now. On `queue`.
    private func answered(generation g: Int) {
        guard let s = successor, s.generation == g, s.pinged != nil else { return }
        promote(s)
    }

    /// A renewal's new launch went wrong: it is ended, said so (the page goes on as it was), and tried again in 60 s.
    private func giveUpSuccessor(_ what: String) {
        onEvent(.pageError(id: id, message: "a new launch of the page, to take the place of one that had grown, " + what
                           + (successorError.map { " (\($0.prefix(200)))" } ?? "") + "; tried again in 60 s"))
        abandonSuccessor(retryIn: 60)
    }

    private func renew() {
        let g = fresh()
        let next = 1 - slot
        let route = FrameRoute(PageFrames())
        let size = frames.pageSize ?? settings.viewport
        route.with { $0.want(size) }
        let told = replay.versioned
        guard let (p, location) = spawn(slot: next, generation: g, route: route) else {
            renewAfter = Date().addingTimeInterval(60)
            return
        }
        successorError = nil
        successor = Successor(process: p, generation: g, slot: next, route: route, location: location,
                              told: told)
        if pageState != "{}" { p.send(Self.command(js: "window.__pc && __pc.state(\(pageState))")) }
    }

    /// A report of the launch under the other name: the one started to take the page's place.
    private func successorReport(_ r: [String: JSONValue], slot: Int) {
        guard var s = successor, s.slot == slot, case .string(let kind)? = r["kind"] else { return }
        switch kind {
        case "alive": s.lastAnswer = Date()
        case "loaded":
            s.lastAnswer = Date()
            s.loadedAt = Date()
            catchUp(s.process, told: s.told)
            if pageState != "{}" { s.process.send(Self.command(js: "window.__pc && __pc.state(\(pageState))")) }
        case "fail":
            successor = s
            return giveUpSuccessor("failed: " + (r.text("reason") ?? "its page did not load"))
        default: break
        }
        successor = s
    }

    /// A launch loaded with what the page had been told when it started (or a little later); what changed since, it
    /// is told now (an update with all the data, as a page started again gets it at load). A call made while it
    /// loaded reached no page: seen in a loaded run, an update sent right after the start never showed.
    private func catchUp(_ p: IsolatedProcess, told: (data: String?, playing: Bool, version: Int)) {
        let now = replay.versioned
        guard now.version != told.version else { return }
        if let data = now.data, data != told.data { p.send(Self.call("update", data)) }
        if now.playing != told.playing { p.send(Self.call(now.playing ? "play" : "stop", nil)) }
    }

    /// The launch started beside the page takes its place; the one it replaces is ended.
    private func promote(_ s: Successor) {
        // (A frame still being read from it after 0.2 s: it stalled mid-frame; asked again at the next second.)
        guard s.route.promote(to: frames) else {
            successor?.pinged = nil
            return
        }
        let old = process
        process = s.process
        generation = s.generation
        slot = s.slot
        location = s.location
        startedAt = s.startedAt
        loadedAt = s.loadedAt
        lastAnswer = s.lastAnswer ?? Date()
        lastHeard = Date()
        lastFrame = s.lastFrame
        memory = s.memory
        childError = nil
        handed = 0
        settledMemory = nil
        recentMemory = []
        successor = nil
        renewals += 1
        let grown = old?.residentBytes() ?? 0
        old?.kill()
        onEvent(.widgetRenewed(id: id, renewals: renewals, oldMiB: grown >> 20, newMiB: s.memory >> 20))
    }

    /// Ends the launch started beside the page, if any; a renewal is tried again `retryIn` seconds later.
    private func abandonSuccessor(retryIn: Double = 0) {
        guard let s = successor else { return }
        successor = nil
        s.process.kill()
        renewAfter = Date().addingTimeInterval(retryIn)
    }

    /// A call of the page's `name(argument)` whose answer nobody waits for.
    static func call(_ name: String, _ argument: String?) -> String {
        command(js: "window.__pc && __pc.call(0, \(PageWrapper.literal(name)), \(argument.map(PageWrapper.literal) ?? "undefined"))")
    }

    static func command(js: String) -> String {
        let data = (try? JSONEncoder().encode(["js": js])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

extension [String: JSONValue] {
    func text(_ key: String) -> String? {
        if case .string(let s)? = self[key] { return s }
        return nil
    }
}
