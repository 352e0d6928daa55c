import Foundation

/// One web widget's page, kept running in a process of its own (`pipcompose web-page`, an `IsolatedProcess`), and
/// watched: a process that ends (a crash), a page that stops answering (a script that never returns: the wrapper's
/// heartbeat shares the page's thread), that passes the memory limit, that never finishes loading or navigates away
/// is taken down and started again with backoff (1 s, doubling, at most 30 s), with `widgetFailed` and, at its next
/// frame, `widgetRecovered`. Meanwhile the widget shows its last good frame: nothing here ever makes the frame loop
/// wait.
///
/// `@unchecked Sendable`: the state below is owned by `queue`; `frames` is thread-safe; the reader threads only
/// touch `frames` and post to `queue`.
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
        /// A page whose heartbeat stops this long is taken down; the first one may take `firstAnswer`.
        var answerTimeout: Double = 10
        var firstAnswer: Double = 30
    }

    let id: String
    let frames = PageFrames()
    /// What the page was told, for the page started again.
    let replay: PageReplay
    private let server: PageServer
    private var settings: Settings
    private let onEvent: @Sendable (SessionEvent) -> Void
    private let queue: DispatchQueue
    private var process: IsolatedProcess?
    private var generation = 0
    private var state = State.starting
    private var startedAt = Date()
    private var lastAnswer: Date?
    private var retryAt: Date?
    private var retryDelay = 1.0
    private var restarts = 0
    private var failedBefore = false
    private var framesIn: UInt64 = 0
    /// When the page last said it loaded, and its last frame came.
    private var loadedAt: Date?
    private var lastFrame: Date?
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

    init(id: String, server: PageServer, settings: Settings, replay: PageReplay = PageReplay(data: nil),
         onEvent: @escaping @Sendable (SessionEvent) -> Void) {
        self.id = id
        self.replay = replay
        self.server = server
        self.settings = settings
        self.onEvent = onEvent
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
            generation += 1
            process?.kill()
            process = nil
            for (_, done) in calls { done(.notRunning("stopped")) }
            calls = [:]
        }
    }

    var status: Status {
        queue.sync {
            Status(id: id, state: state, frames: framesIn, restarts: restarts, memoryBytes: memory,
                   lastError: lastError, size: frames.wantedSize, webkitFrames: handed > 0 ? handed : nil)
        }
    }

    /// The page's report from its wrapper (PageServer).
    func report(_ r: [String: JSONValue]) {
        queue.async { [self] in
            guard state == .starting || state == .playing else { return }
            guard case .string(let kind)? = r["kind"] else { return }
            switch kind {
            case "alive": lastAnswer = Date()
            case "loaded":
                lastAnswer = Date()
                loadedAt = Date()
            case "fail": fail(r.text("reason") ?? "the page failed")
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
            process.send(Self.command(js: "window.__pc && __pc.call(\(n), \(PageWrapper.literal(name)), \(arg))"))
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

    /// Loads the page again in its frame (its scripts start over; the process stays).
    func reload() {
        queue.async { [self] in process?.send(Self.command(js: "window.__pc && __pc.reload()")) }
    }

    /// What `window.pipcompose` tells the page (size, viewers, playing, now playing), as a JSON object.
    func tell(_ json: String) {
        queue.async { [self] in
            guard json != pageState else { return }
            pageState = json
            process?.send(Self.command(js: "window.__pc && __pc.state(\(json))"))
        }
    }

    // MARK: - On `queue`

    private func launch() {
        generation += 1
        let g = generation
        let size = frames.pageSize ?? settings.viewport
        server.setSize(size, of: id)
        state = .starting
        startedAt = Date()
        lastAnswer = nil
        loadedAt = nil
        childError = nil
        handed = 0
        var environment = ProcessInfo.processInfo.environment
        // Software GL (Mesa's llvmpipe): no GPU or display needed. Not "true": with that exact value wpesrc 1.22
        // fixates its own 1920x1080 caps and ignores the size asked for (not-negotiated).
        if environment["LIBGL_ALWAYS_SOFTWARE"] == nil { environment["LIBGL_ALWAYS_SOFTWARE"] = "1" }
        location = server.pageURL(id)
        let p: IsolatedProcess
        do {
            p = try IsolatedProcess(executable: settings.executable, arguments: [
                "web-page", "--location", location,
                "--viewport", "\(settings.viewport.width)x\(settings.viewport.height)",
                "--size", "\(size.width)x\(size.height)", "--fps", String(settings.fps),
            ], environment: environment)
        } catch {
            fail("\(error)")
            return
        }
        process = p
        let read = Thread { [weak self] in self?.read(p, generation: g) }
        read.name = "web-\(id)-frames"
        read.start()
        let errors = Thread { [weak self] in
            p.readErrors { line in
                // What the process said of a crash or a failure, for the reason given when it ends.
                let l = line.lowercased()
                guard l.contains("fatal") || l.contains("crash") || l.contains("error") || l.contains("abort") else { return }
                self?.queue.async { [weak self] in if let self, g == generation { childError = line } }
            }
        }
        errors.name = "web-\(id)-stderr"
        errors.start()
    }

    /// On its own thread: frames into `frames`, messages to `queue`, until the process's output ends.
    private func read(_ p: IsolatedProcess, generation g: Int) {
        var head: [UInt8] = []
        var payload: [UInt8] = []
        while p.read(16, into: &head), let h = PageWire.parse(head: Array(head.prefix(16))) {
            switch h.kind {
            case .frame, .opaqueFrame:
                guard h.a > 0, h.b > 0, h.a * h.b <= PageWire.maxPixels else { break }
                let size = PixelSize(width: h.a, height: h.b), row = size.width * 4
                // A frame of neither the widget's size nor the coming one (an old one, during a resize) is read and
                // left out.
                guard frames.accepts(size) else {
                    guard p.read(row * size.height, into: &payload) else { break }
                    continue
                }
                // Straight from the pipe into the surface the widget will draw: no copy in between.
                let whole = frames.put(size: size, opaque: h.kind == .opaqueFrame) { dst, stride in
                    if stride == row { return p.read(row * size.height, to: dst) }
                    return (0..<size.height).allSatisfy { y in p.read(row, to: dst + y * stride) }
                }
                guard whole else { break }
                queue.async { [self] in framed(generation: g) }
            case .message:
                guard h.a <= 1 << 20, p.read(h.a, into: &payload) else { break }
                let message = try? JSONDecoder().decode([String: JSONValue].self, from: Data(payload.prefix(h.a)))
                if let e = message?.text("error") { queue.async { [self] in if g == generation { childError = e } } }
                if let uri = message?.text("uri") { queue.async { [self] in if g == generation { shows(uri) } } }
                if case .number(let n)? = message?["handed"] {
                    queue.async { [self] in if g == generation { handed = UInt64(max(0, n)) } }
                }
            }
        }
        queue.async { [self] in
            guard g == generation, state == .starting || state == .playing else { return }
            fail("its process ended" + (childError.map { " (\($0.prefix(200)))" } ?? " (a crash?)"))
        }
    }

    /// The address WebKit shows now (its process says so each second): another than the page's (its fragment aside)
    /// means the page navigated away, and it is started again at its own.
    private func shows(_ uri: String) {
        func bare(_ u: String) -> Substring { u.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }
        guard !uri.isEmpty, !location.isEmpty, bare(uri) != bare(location) else { return }
        fail("the page went to \(uri)")
    }

    private func framed(generation g: Int) {
        guard g == generation else { return }
        framesIn += 1
        lastFrame = Date()
        if state == .starting {
            state = .playing
            if failedBefore {
                failedBefore = false
                onEvent(.widgetRecovered(id: id, restarts: restarts))
            }
            retryDelay = 1
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
            let since = lastAnswer ?? startedAt
            let limit = lastAnswer == nil ? settings.firstAnswer : settings.answerTimeout
            if now.timeIntervalSince(since) > limit {
                fail(lastAnswer == nil ? "the page did not start within \(Int(limit)) s"
                     : "the page does not answer (a script that never returns?) for \(Int(limit)) s")
            }
        case .failed:
            if let retryAt, now >= retryAt { launch() }
        case .stopped:
            break
        }
    }

    private func fail(_ reason: String) {
        guard state == .starting || state == .playing else { return }
        generation += 1
        process?.kill()
        process = nil
        state = .failed
        lastError = reason
        restarts += 1
        failedBefore = true
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, 30)
        retryAt = Date().addingTimeInterval(delay)
        for (_, done) in calls { done(.failed("the page failed: \(reason)")) }
        calls = [:]
        onEvent(.widgetFailed(id: id, reason: reason, retryInSeconds: delay))
    }

    private func resize(to size: PixelSize) {
        server.setSize(size, of: id)
        if size.width > settings.viewport.width || size.height > settings.viewport.height {
            // Beyond the viewport WebKit renders: a bigger one, and the page starts again (its state is lost).
            settings.viewport = PixelSize(width: max(size.width, settings.viewport.width),
                                          height: max(size.height, settings.viewport.height))
            generation += 1
            process?.kill()
            process = nil
            launch()
            return
        }
        process?.send("{\"size\":[\(size.width),\(size.height)]}")
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
