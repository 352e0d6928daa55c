import Foundation

/// One video layer's input: a GStreamer pipeline (`pipelines/video-input.pipeline`) that decodes the source and
/// scales it to the layer's rectangle, its frames put in the layer's `VideoFrameSlot`.
///
/// An input fails alone: when it cannot open, errors, a live stream ends, or no picture comes for a while (none
/// `firstFrameTimeout` seconds after opening, or none for `stallTimeout` seconds once playing), the layer shows its
/// placeholder (`inputLost`) and the input is tried again after 1, 2, 4, then every 8 seconds, until a frame comes
/// (`inputBack`; the very first frame is `inputStarted`). A file loops at its end when the layer says `loop: true`,
/// else it stays on its last frame (`inputEnded`). The frame size follows the layer's size; a source that changes
/// its own size stays fitted in it (`inputSizeChanged`). `change(to:)` swaps the source at run time.
///
/// `@unchecked Sendable`: the pipeline and state are owned by `queue`; counters are behind `lock`.
public final class VideoInput: @unchecked Sendable {
    public enum State: String, Sendable { case connecting, playing, lost, ended, stopped }

    public let id: String
    public let loops: Bool
    public let fit: ImageFit
    /// Frames come as I420 (the layer is a plate: the renderer copies them to the encoder's buffer as they are).
    public let i420: Bool
    public let slot: VideoFrameSlot
    private let template: PipelineTemplate
    private let onEvent: @Sendable (SessionEvent) -> Void
    private let queue = DispatchQueue(label: "video-input")
    private var pipeline: Pipeline?
    private var sink: AppSink?
    private var generation = 0
    private var backoff = Backoff(first: 1, limit: VideoInput.maxRetryDelay)
    private let lock = NSLock()
    private var _state = State.connecting
    private var _received: UInt64 = 0
    private var _restarts = 0
    private var _lastError: String?
    private var _source: VideoSource
    private var _inputSize: PixelSize?
    private var lastArrival: Double?
    private var fpsWindow = (start: 0.0, count: 0)
    private var _fps = 0.0
    /// When the pipeline was last opened (monotonic seconds), on `queue`.
    private var openedAt = 0.0
    private var watchdog: DispatchSourceTimer?
    static let maxRetryDelay = 8.0
    /// A live source that shows no picture this long after opening, or stops showing one this long, is lost.
    public static let firstFrameTimeout = 10.0
    public static let stallTimeout = 5.0

    public init(id: String, source: VideoSource, loops: Bool, fit: ImageFit = .fit, i420: Bool = false, slot: VideoFrameSlot,
                template: PipelineTemplate, onEvent: @escaping @Sendable (SessionEvent) -> Void) {
        self.id = id
        _source = source
        self.loops = loops
        self.fit = fit
        self.i420 = i420
        self.slot = slot
        self.template = template
        self.onEvent = onEvent
    }

    public var state: State { lock.withLock { _state } }
    public var received: UInt64 { lock.withLock { _received } }
    public var restarts: Int { lock.withLock { _restarts } }
    public var lastError: String? { lock.withLock { _lastError } }
    public var source: VideoSource { lock.withLock { _source } }
    /// The size the source delivers, before it is scaled to the layer.
    public var inputSize: PixelSize? { lock.withLock { _inputSize } }
    /// Frames received per second over the last second; 0 once nothing came for two seconds.
    public var fps: Double {
        lock.withLock {
            guard let last = lastArrival, ProcessInfo.processInfo.systemUptime - last < 2 else { return 0 }
            return _fps
        }
    }

    /// The launch text for `size` (used by `--dump-pipeline` and to start).
    public func launch(size: PixelSize) throws -> String {
        try Self.launch(template: template, source: source, fit: fit, size: size, i420: i420)
    }

    static func launch(template: PipelineTemplate, source: VideoSource, fit: ImageFit, size: PixelSize,
                       i420: Bool = false) throws -> String {
        let src: String
        switch source {
        case .test(let pattern): src = "videotestsrc is-live=true pattern=\(pattern)"
        case .uri(let uri): src = "uridecodebin name=decoder uri=\"\(PipelineTemplate.quoted(uri))\" caps=video/x-raw"
        }
        return try template.render(["source": src, "scale": scaling(fit, size), "caps": caps(fit, size, i420: i420)])
    }

    /// How the input reaches the layer's size: letterboxed (`fit`), cropped to the box's shape then scaled
    /// (`fill`), or only squared pixels at the input's own size (`center`, painted centered and clipped). The first
    /// element is "input": its sink pad sees the source's own size. (aspectratiocrop comes straight after the source:
    /// after another static element, gst-launch cannot link it to the scaler.)
    static func scaling(_ fit: ImageFit, _ size: PixelSize) -> String {
        switch fit {
        case .fit: "videoscale name=input add-borders=true"
        case .fill: "aspectratiocrop name=input aspect-ratio=\(size.width)/\(size.height) ! videoscale add-borders=false"
        case .center: "videoscale name=input"
        }
    }

    static func caps(_ fit: ImageFit, _ size: PixelSize, i420: Bool = false) -> String {
        let format = i420 ? "I420" : "BGRx"
        return fit == .center ? "video/x-raw,format=\(format),pixel-aspect-ratio=1/1"
            : "video/x-raw,format=\(format),width=\(size.width),height=\(size.height),pixel-aspect-ratio=1/1"
    }

    public func start() {
        slot.follow { [weak self] size in
            guard let self else { return }
            queue.async { [weak self] in self?.resize(to: size) }
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in self?.checkStall() }
        timer.resume()
        watchdog = timer
        queue.async { [weak self] in self?.open() }
    }

    /// Swaps the source at run time: the layer keeps the old picture until the new source's first frame
    /// (`inputChanged`, then `inputStarted`), or shows its placeholder if the new one fails.
    public func change(to newSource: VideoSource) {
        queue.async { [weak self] in
            guard let self, state != .stopped else { return }
            teardown()
            generation += 1
            backoff.reset()
            lock.withLock {
                _source = newSource
                _state = .connecting
                _inputSize = nil
                _lastError = nil
                _restarts = 0
            }
            onEvent(.inputChanged(id: id, source: newSource.description))
            open()
        }
    }

    /// On `queue`, every second: a live source that shows nothing is lost (and retried) like one that errors.
    private func checkStall() {
        guard pipeline != nil, !source.isFile || state == .connecting else { return }
        let now = ProcessInfo.processInfo.systemUptime
        let (state, last) = lock.withLock { (_state, lastArrival) }
        if state == .connecting, now - openedAt > Self.firstFrameTimeout {
            ended(generation: generation, error: GstError(element: id, message:
                "no picture within \(Int(Self.firstFrameTimeout)) s of opening"))
        } else if state == .playing, let last, last >= openedAt, now - last > Self.stallTimeout {
            ended(generation: generation, error: GstError(element: id, message:
                "no picture for \(Int(Self.stallTimeout)) s (the source stalled)"))
        }
    }

    /// On `queue`: builds and plays the pipeline at the size the layer wants now.
    private func open() {
        guard state != .stopped else { return }
        generation += 1
        let g = generation
        let size = slot.wanted ?? PixelSize(width: 320, height: 180)
        openedAt = ProcessInfo.processInfo.systemUptime
        do {
            let p = try Pipeline(name: "video:\(id)", launch: try launch(size: size))
            p.onCaps(ofElementNamed: "input") { [weak self] caps in
                if let size = caps.videoSize { self?.delivers(size) }
            }
            // No jitter buffer (rtspsrc's default holds 2 s): a layer shows the newest picture as soon as it is
            // decoded (measured: 100 ms here and a synced sink made a second pipcompose 145 ms later than its source).
            p.setOnSource(ofElementNamed: "decoder", factory: "rtspsrc", "latency", "0")
            sink = p.appSink(named: "frames", onSample: { [weak self] buffer, caps in
                self?.arrived(buffer, caps, generation: g)
            }, onEOS: { [weak self] in
                guard let self else { return }
                queue.async { [weak self] in self?.ended(generation: g, error: nil) }
            })
            guard sink != nil else {
                p.stop(drain: false)
                throw GstError(element: id, message: "\(template.path) needs 'appsink name=frames'")
            }
            // A file plays at its own pace (the sink syncs); a live source's frames are shown as they come. Only the
            // newest is kept.
            p.set("sync", source.isFile ? "true" : "false", onElementNamed: "frames")
            p.set("max-buffers", "1", onElementNamed: "frames")
            pipeline = p
            try p.play { [weak self] event in
                guard let self, case .error(let e) = event else { return }
                queue.async { [weak self] in self?.ended(generation: g, error: e) }
            }
        } catch {
            ended(generation: g, error: error as? GstError ?? GstError(element: id, message: "\(error)"))
        }
    }

    /// Streaming thread: a frame.
    private func arrived(_ buffer: MediaBuffer, _ caps: MediaCaps?, generation g: Int) {
        guard let size = caps?.videoSize else { return }
        let now = ProcessInfo.processInfo.systemUptime
        slot.put(buffer, size: size, i420: caps?.videoFormat == "I420", at: now)
        let wasPlaying = lock.withLock { () -> Bool in
            _received += 1
            lastArrival = now
            fpsWindow.count += 1
            if now - fpsWindow.start >= 1 {
                _fps = fpsWindow.start > 0 ? Double(fpsWindow.count) / (now - fpsWindow.start) : 0
                fpsWindow = (now, 0)
            }
            defer { if _state == .connecting || _state == .lost { _state = .playing } }
            return _state == .playing
        }
        if !wasPlaying { queue.async { [weak self] in self?.cameBack(generation: g) } }
    }

    /// Streaming thread: the source's own picture size (before scaling); a change after the first is an event.
    private func delivers(_ size: PixelSize) {
        let old = lock.withLock { () -> PixelSize? in
            defer { _inputSize = size }
            return _inputSize
        }
        if let old, old != size {
            onEvent(.inputSizeChanged(id: id, from: old, to: size))
        }
    }

    private func cameBack(generation g: Int) {
        guard g == generation else { return }
        let restarts = lock.withLock { _restarts }
        backoff.reset()
        if restarts > 0 { onEvent(.inputBack(id: id, source: source.description, restarts: restarts)) }
        else { onEvent(.inputStarted(id: id, source: source.description)) }
    }

    /// On `queue`: the pipeline ended or failed.
    private func ended(generation g: Int, error: GstError?) {
        guard g == generation, state != .stopped else { return }
        if error == nil, source.isFile {
            if loops, let pipeline, pipeline.seek(toSeconds: 0) { return }
            lock.withLock { _state = .ended }
            onEvent(.inputEnded(id: id, source: source.description))
            return
        }
        let reason = Self.explained(error?.message ?? "the stream ended", source: source)
        teardown()
        slot.lose()
        let delay = backoff.failed()
        lock.withLock {
            _state = .lost
            _lastError = reason
            _restarts += 1
        }
        onEvent(.inputLost(id: id, source: source.description, reason: reason, retryInSeconds: delay))
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self, g == generation, state == .lost else { return }
            open()
        }
    }

    /// On `queue`: the layer's size changed; the scaler's caps follow.
    private func resize(to size: PixelSize) {
        guard fit != .center, let pipeline else { return }
        if fit == .fill { pipeline.set("aspect-ratio", "\(size.width)/\(size.height)", onElementNamed: "input") }
        pipeline.set("caps", Self.caps(fit, size, i420: i420), onElementNamed: "size")
    }

    /// GStreamer's reason, with what to do when it is a login the URL did not carry.
    static func explained(_ reason: String, source: VideoSource) -> String {
        let r = reason.lowercased()
        guard r.contains("unauthorized") || r.contains("401") || r.contains("authenticat") else { return reason }
        return reason + "; the source wants a login: put it in the URL (rtsp://USER:PASSWORD@host/path)"
    }

    private func teardown() {
        pipeline?.stop(drain: false)
        pipeline = nil
        sink = nil
    }

    public func stop() {
        queue.sync {
            watchdog?.cancel()
            watchdog = nil
            lock.withLock { _state = .stopped }
            generation += 1
            teardown()
        }
    }
}

extension VideoInput: SessionInput {
    func report(into status: inout LiveSession.Status) {
        let c = slot.counts
        status.inputs.append(StatusPayload.Input(
            id: id, source: source.description, state: state.rawValue, received: received, shown: c.shown,
            repeated: c.repeated, skipped: c.skipped, delayMs: c.delayMs, restarts: restarts, lastError: lastError,
            fps: (fps * 10).rounded() / 10, inputSize: inputSize?.description))
    }

    /// A new source for its layer: the input starts over with it (the old picture stays until then).
    func widgetChanged(id: String, _ change: any WidgetChange) {
        guard id == self.id, let video = change as? VideoConfig.Change, let source = video.source else { return }
        self.change(to: source)
    }
}
