import Foundation

/// One H.264 encoder: its own pipeline from `pipelines/encode-*.pipeline`, fed raw frames by the frame loop,
/// its encoded stream handed to every output subscribed to it. One per distinct output size: the live encoder
/// follows the render size; a fixed one letterboxes into the size a file was started with.
///
/// `@unchecked Sendable`: subscribers, counters and key-frame bookkeeping are behind `lock`; the pipeline, appsrc
/// and appsink are used through GStreamer's thread-safe calls.
public final class Encoder: @unchecked Sendable {
    public typealias Subscriber = (_ buffer: MediaBuffer, _ caps: MediaCaps?) -> Void

    /// Unique for the life of the process (an object's address, and so its ObjectIdentifier, can come back
    /// for a later encoder; outputs remember encoders that ended by this number).
    public let serial = Serials.shared.next()
    /// nil for the live encoder, which follows the render size.
    public let fixedSize: PixelSize?
    public let launch: String
    let pipeline: Pipeline
    let input: AppSource
    private var sink: AppSink?
    /// Key frames asked for at a running time (the encoder element's own handling of such requests is broken).
    private let keyFrames: KeyFrameSchedule?
    private let lock = NSLock()
    private let out = EncodedFanOut()
    /// Whether each subscriber has someone looking at its pictures now (absent: always).
    private var watching: [ObjectIdentifier: @Sendable () -> Bool] = [:]
    private var _encoded: UInt64 = 0
    private var lastSize: PixelSize?
    /// Called once the last frame reached the subscribers after `finish()` began (EOS at the appsink).
    public var onDrained: (@Sendable () -> Void)?
    /// Called on the streaming thread with the size of the first encoded frame of each new size.
    public var onNewSize: (@Sendable (PixelSize) -> Void)?
    private var _bytes: UInt64 = 0
    /// Running time of the last key frame handed out, and of the key frame viewers are waiting for; any key frame
    /// after `keyAskedAfter` (the last frame handed out when they asked) serves them.
    private var lastKey: MediaTime?
    private var keyDue: MediaTime?
    private var keyAskedAfter: MediaTime?
    private var lastPTS: MediaTime?
    private var _viewerKeysAsked: UInt64 = 0
    /// The least time between a key frame and one that viewers ask for. A key frame costs x264 several frames'
    /// worth of bits; two close together drain the rate control's buffer and the second comes out blurred for
    /// every viewer (8 viewers joining at once took a 640x360 picture to 32.7 dB). Half a second keeps the
    /// picture sharp while a joining viewer still waits at most that long.
    static let viewerKeySpacing: MediaTime = 500_000_000

    public init(template: PipelineTemplate, settings: EncoderSettings, kind: EncoderSettings.Kind,
                liveSize: PixelSize, fixedSize: PixelSize?, fps: Int, rawCaps: String,
                onError: @escaping @Sendable (GstError) -> Void) throws {
        self.fixedSize = fixedSize
        launch = try template.render(settings.values(for: kind, liveSize: liveSize, fixed: fixedSize, fps: fps))
        let name = fixedSize.map { "encoder-\($0)" } ?? "encoder-live"
        pipeline = try Pipeline(name: name, launch: launch)
        // Raw frames: a short leaky queue (4 frames: enough for x264's start-up at 1080p), so a slow encoder
        // drops frames instead of growing memory.
        guard pipeline.hasElement(named: "encoded"), let src = pipeline.appSource(named: "frames", maxBuffers: 4) else {
            pipeline.stop(drain: false)
            throw GstError(element: name, message: "\(template.path) needs 'appsrc name=frames' and 'appsink name=encoded'")
        }
        input = src
        input.watchRoom()
        try input.setCaps(rawCaps)
        sink = nil
        keyFrames = KeyFrameSchedule(encoderNamed: "encoder", in: pipeline)
        // Frames come out stamped with their running time, the frame clock's: every encoder shares one timeline
        // and an output can move from one encoder to another.
        sink = pipeline.appSink(named: "encoded", runningTime: true, onSample: { [weak self] buffer, caps in
            self?.fanOut(buffer, caps)
        }, onEOS: { [weak self] in self?.drained() })
        try pipeline.play { event in
            if case .error(let e) = event { onError(e) }
        }
    }

    /// Hands an encoded frame to every subscriber (through the delay line when one is set).
    private func fanOut(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        if let size = caps?.videoSize {
            let changed = lock.withLock { () -> Bool in
                defer { lastSize = size }
                return lastSize != size
            }
            if changed { onNewSize?(size) }
        }
        let isKey = buffer.isKeyFrame
        let pts = buffer.pts
        let served = lock.withLock { () -> MediaTime? in
            var served: MediaTime?
            if let pts {
                lastPTS = pts
                if isKey {
                    lastKey = pts
                    if let due = keyDue, pts >= due || pts > (keyAskedAfter ?? pts) {
                        served = due
                        keyDue = nil
                        keyAskedAfter = nil
                    }
                }
            }
            _encoded += 1
            _bytes += UInt64(buffer.size)
            return served
        }
        // A key frame asked for at once came before the spaced one viewers waited for: it serves them, and the
        // spaced one is not made.
        if let served { keyFrames?.cancel(ifDueAt: served) }
        out.hand(buffer, caps)
    }

    private func drained() {
        // The delayed frames still have to come out.
        out.drainDelayed(timeout: 2)
        onDrained?()
    }

    /// Holds every encoded frame `milliseconds` before the outputs get it (an injected, known delay).
    public func delay(by milliseconds: Double, fps: Int) {
        guard milliseconds > 0 else { return }
        // Room for the delay's worth of frames twice over: bounded, and never the cause of a drop itself.
        let capacity = Int((milliseconds / 1000 * Double(fps)).rounded(.up)) * 2 + 8
        out.delay(by: milliseconds, capacity: capacity)
    }

    /// How long frames were really held by the injected delay.
    public var delayHeld: LatencySummary? { out.delayHeld }

    /// Frames the injected delay had no room for.
    public var delayDropped: UInt64 { out.delayDropped }

    public var encodedFrames: UInt64 { lock.withLock { _encoded } }
    public var encodedBytes: UInt64 { lock.withLock { _bytes } }
    public var droppedFrames: UInt64 { input.dropped }
    public var subscriberCount: Int { out.count }

    /// Hands every encoded frame to `handler` until `unsubscribe(owner)`; a new subscriber gets a key frame soon
    /// unless it says it has one coming (`requestKeyFrame(at:)`).
    /// `watching` tells whether anyone looks at the subscriber's pictures now (a server with no viewer: nobody);
    /// without it, always.
    public func subscribe(_ owner: AnyObject, requestKeyFrame: Bool = true, watching: (@Sendable () -> Bool)? = nil,
                          _ handler: @escaping Subscriber) {
        out.subscribe(owner, handler)
        lock.withLock { watching.map { self.watching[ObjectIdentifier(owner)] = $0 } }
        if requestKeyFrame { self.requestKeyFrame() }
    }

    public func unsubscribe(_ owner: AnyObject) {
        out.unsubscribe(owner)
        _ = lock.withLock { watching.removeValue(forKey: ObjectIdentifier(owner)) }
    }

    /// Whether anyone but `owner`'s viewers looks at this encoder's pictures now: a key frame out of turn would
    /// cost them sharpness.
    public func isWatched(besides owner: AnyObject) -> Bool {
        let owners = out.owners
        let others = lock.withLock { () -> [(@Sendable () -> Bool)?] in
            owners.filter { $0 != ObjectIdentifier(owner) }.map { watching[$0] }
        }
        return others.contains { $0?() ?? true }
    }

    /// Asks for a key frame now, whatever it costs: an output that cannot start without one.
    public func requestKeyFrame() { sink?.requestKeyFrame() }

    /// A viewer joined and needs a key frame: asks for one at least `viewerKeySpacing` after the last, and
    /// only when none is already on its way, so a crowd of viewers joining (or a client that plays in a loop)
    /// costs the others one key frame, not one each. `now`: nobody but the viewers waiting would see what an
    /// early key frame costs, so it comes with the next frame.
    public func requestKeyFrameForViewer(now: Bool = false) {
        let at = lock.withLock { () -> MediaTime? in
            if now {
                _viewerKeysAsked += 1
                if keyDue == nil { keyAskedAfter = lastPTS }
                keyDue = 0
                return 0
            }
            guard keyDue == nil else { return nil }
            let due = lastKey.map { $0 + Self.viewerKeySpacing } ?? 0
            keyDue = due
            keyAskedAfter = lastPTS
            _viewerKeysAsked += 1
            return due
        }
        if let at { requestKeyFrame(at: at) }
    }

    /// Key frames asked for on behalf of viewers (each may have served many).
    public var viewerKeysAsked: UInt64 { lock.withLock { _viewerKeysAsked } }

    /// Makes the first frame stamped `runningTime` or later a key frame (where an output switches to this encoder).
    /// Without an element named "encoder" to watch, a key frame is asked for at once.
    public func requestKeyFrame(at runningTime: MediaTime) {
        if let keyFrames { keyFrames.request(at: runningTime) } else { requestKeyFrame() }
    }

    /// `@unchecked Sendable`: `last` is behind `lock`.
    final class Serials: @unchecked Sendable {
        static let shared = Serials()
        private let lock = NSLock()
        private var last: UInt64 = 0
        func next() -> UInt64 { lock.withLock { last += 1; return last } }
    }

    /// Takes a reference to a raw frame. When the encoder is behind (its queue full: starting over at a large
    /// size, a busy machine), waits for room until `deadline`; past it, the oldest queued frame is dropped and
    /// counted. The frame loop then counts the frames it could not draw in time as late: a recording holds
    /// every frame that was drawn.
    public func push(_ buffer: MediaBuffer, waitingUntil deadline: Date) {
        input.push(buffer, waitingUntil: deadline)
    }

    public func setRawCaps(_ caps: String) throws { try input.setCaps(caps) }

    /// Drains what is queued through the encoder to the subscribers, then stops.
    @discardableResult
    public func finish(timeout: TimeInterval = 5) -> Bool {
        let ok = out.finish(pipeline, input: input, timeout: timeout)
        sink = nil
        return ok
    }
}
