import CGst
import Foundation

/// One video layer's input: a GStreamer pipeline (`pipelines/video-input.pipeline`) that decodes the source and
/// scales it to the layer's rectangle, its frames put in the layer's `VideoFrameSlot`.
///
/// An input fails alone: when it cannot open, errors, or a live stream ends, the layer shows its placeholder over
/// the last frame (`inputLost`) and the input is tried again after 1, 2, 4, then every 8 seconds, until a frame
/// comes (`inputBack`; the very first frame is `inputStarted`). A file loops at its end when the layer says `loop: true`, else it stays on its last frame.
/// The frame size follows the layer's size; a source that changes its own size stays letterboxed in it.
///
/// `@unchecked Sendable`: the pipeline and state are owned by `queue`; counters are behind `lock`.
public final class VideoInput: @unchecked Sendable {
    public enum State: String, Sendable { case connecting, playing, lost, ended, stopped }

    public let id: String
    public let source: VideoSource
    public let loops: Bool
    public let fit: ImageFit
    public let slot: VideoFrameSlot
    private let template: PipelineTemplate
    private let onEvent: @Sendable (String, [String: String]) -> Void
    private let queue = DispatchQueue(label: "video-input")
    private var pipeline: Pipeline?
    private var sink: AppSink?
    private var generation = 0
    private var retryDelay = 1.0
    private let lock = NSLock()
    private var _state = State.connecting
    private var _received: UInt64 = 0
    private var _restarts = 0
    private var _lastError: String?
    static let maxRetryDelay = 8.0

    public init(id: String, source: VideoSource, loops: Bool, fit: ImageFit = .fit, slot: VideoFrameSlot,
                template: PipelineTemplate, onEvent: @escaping @Sendable (String, [String: String]) -> Void) {
        self.id = id
        self.source = source
        self.loops = loops
        self.fit = fit
        self.slot = slot
        self.template = template
        self.onEvent = onEvent
    }

    public var state: State { lock.withLock { _state } }
    public var received: UInt64 { lock.withLock { _received } }
    public var restarts: Int { lock.withLock { _restarts } }
    public var lastError: String? { lock.withLock { _lastError } }

    /// The launch text for `size` (used by `--dump-pipeline` and to start).
    public func launch(size: PixelSize) throws -> String {
        let src: String
        switch source {
        case .test(let pattern): src = "videotestsrc is-live=true pattern=\(pattern)"
        case .uri(let uri): src = "uridecodebin name=decoder uri=\"\(PipelineTemplate.quoted(uri))\" caps=video/x-raw"
        }
        return try template.render(["source": src, "scale": Self.scaling(fit, size), "caps": Self.caps(fit, size)])
    }

    /// How the input reaches the layer's size: letterboxed (`fit`), cropped to the box's shape then scaled
    /// (`fill`), or only squared pixels at the input's own size (`center`, painted centered and clipped).
    static func scaling(_ fit: ImageFit, _ size: PixelSize) -> String {
        switch fit {
        case .fit: "videoscale add-borders=true"
        case .fill: "aspectratiocrop name=crop aspect-ratio=\(size.width)/\(size.height) ! videoscale"
        case .center: "videoscale"
        }
    }

    static func caps(_ fit: ImageFit, _ size: PixelSize) -> String {
        fit == .center ? "video/x-raw,format=BGRx,pixel-aspect-ratio=1/1"
            : "video/x-raw,format=BGRx,width=\(size.width),height=\(size.height),pixel-aspect-ratio=1/1"
    }

    public func start() {
        slot.follow { [weak self] size in
            guard let self else { return }
            queue.async { [weak self] in self?.resize(to: size) }
        }
        queue.async { [weak self] in self?.open() }
    }

    /// On `queue`: builds and plays the pipeline at the size the layer wants now.
    private func open() {
        guard state != .stopped else { return }
        generation += 1
        let g = generation
        let size = slot.wanted ?? PixelSize(width: 320, height: 180)
        do {
            let p = try Pipeline(name: "video:\(id)", launch: try launch(size: size))
            // Lower rtspsrc's default 2 s jitter buffer: a layer shows the newest picture, late or not.
            p.onSourceSetup(ofElementNamed: "decoder") { source in
                let element = source.assumingMemoryBound(to: GstElement.self)
                guard let factory = gst_element_get_factory(element),
                      let name = cgst_object_name(cgst_object(UnsafeMutableRawPointer(factory))),
                      String(cString: name) == "rtspsrc" else { return }
                gst_util_set_object_arg(cgst_gobject(source), "latency", "100")
            }
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
            // Frames at the source's own pace (a file plays in real time); only the newest is kept.
            p.set("sync", "true", onElementNamed: "frames")
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
        slot.put(buffer, size: size, at: ProcessInfo.processInfo.systemUptime)
        let wasPlaying = lock.withLock { () -> Bool in
            _received += 1
            defer { if _state == .connecting || _state == .lost { _state = .playing } }
            return _state == .playing
        }
        if !wasPlaying { queue.async { [weak self] in self?.cameBack(generation: g) } }
    }

    private func cameBack(generation g: Int) {
        guard g == generation else { return }
        let restarts = lock.withLock { _restarts }
        retryDelay = 1
        if restarts > 0 { onEvent("inputBack", ["id": id, "source": source.description, "restarts": String(restarts)]) }
        else { onEvent("inputStarted", ["id": id, "source": source.description]) }
    }

    /// On `queue`: the pipeline ended or failed.
    private func ended(generation g: Int, error: GstError?) {
        guard g == generation, state != .stopped else { return }
        if error == nil, source.isFile {
            if loops, let pipeline, pipeline.seek(toSeconds: 0) { return }
            lock.withLock { _state = .ended }
            onEvent("inputEnded", ["id": id, "source": source.description])
            return
        }
        let reason = error?.message ?? "the stream ended"
        teardown()
        slot.lose()
        let delay = retryDelay
        retryDelay = min(Self.maxRetryDelay, retryDelay * 2)
        lock.withLock {
            _state = .lost
            _lastError = reason
            _restarts += 1
        }
        onEvent("inputLost", ["id": id, "source": source.description, "reason": reason,
                              "retryInSeconds": String(format: "%.0f", delay)])
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self, g == generation, state == .lost else { return }
            open()
        }
    }

    /// On `queue`: the layer's size changed; the scaler's caps follow.
    private func resize(to size: PixelSize) {
        guard fit != .center, let pipeline else { return }
        if fit == .fill { pipeline.set("aspect-ratio", "\(size.width)/\(size.height)", onElementNamed: "crop") }
        pipeline.set("caps", Self.caps(fit, size), onElementNamed: "size")
    }

    private func teardown() {
        pipeline?.stop(drain: false)
        pipeline = nil
        sink = nil
    }

    public func stop() {
        queue.sync {
            lock.withLock { _state = .stopped }
            generation += 1
            teardown()
        }
    }
}
