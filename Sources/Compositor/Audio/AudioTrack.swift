import Foundation

/// The audio track: samples drawn on the frame clock's timeline by the frame loop, encoded once to AAC in
/// its own pipeline (`pipelines/encode-aac.pipeline`), each packet handed to every output that carries sound.
///
/// Sample n is at n / 48000 s of running time, the frames' timeline: audio and picture share one clock by
/// construction, and a resize never touches the track. The frame loop draws up to the time of the frame it
/// just sent, so no packet is stamped later than now (an RTSP media maps timestamps to its own running time
/// and would hold a packet from the future).
///
/// `@unchecked Sendable`: `written` is only touched by the frame loop thread (`advance`) and by `finish` after
/// the loop ended; subscribers and counters are behind `lock`; the pipeline is driven through GStreamer's
/// thread-safe calls.
public final class AudioTrack: @unchecked Sendable {
    public typealias Subscriber = (_ buffer: MediaBuffer, _ caps: MediaCaps?) -> Void
    public static let rate = 48_000
    public static let channels = 2
    static let rawCaps = "audio/x-raw,format=S16LE,layout=interleaved,rate=\(rate),channels=\(channels)"
    /// Priming samples each AAC encoder puts before the first input sample (measured: a tick drawn at sample 0
    /// decodes at sample 1024 from avenc_aac and 1600 from voaacenc, through mp4mux, matroskamux and mpegtsmux).
    static let primingSamples = ["avenc_aac": 1024, "voaacenc": 1600]

    public let choice: AudioChoice
    public let launch: String
    private let signal: any AudioSignal
    private let pipeline: Pipeline
    private let input: AppSource
    private var sink: AppSink?
    /// Nanoseconds the encoded packets are moved back by (the encoder's priming).
    public let primingNanoseconds: MediaTime
    private var written: Int64 = 0
    private let lock = NSLock()
    private var subscribers: [ObjectIdentifier: Subscriber] = [:]
    private var delayLine: DelayLine?
    private var _packets: UInt64 = 0
    private var _bytes: UInt64 = 0
    private var _primingDropped: UInt64 = 0

    /// `offsetMilliseconds` moves the sound against the picture by a known amount (`--inject-av-offset-ms`);
    /// `music` is the player of `--audio FILE` (required for `.music`).
    public init(choice: AudioChoice, offsetMilliseconds: Double, template: PipelineTemplate, bitrate: Int = 128_000,
                music: MusicPlayer? = nil, warn: @escaping @Sendable (String) -> Void,
                onError: @escaping @Sendable (GstError) -> Void) throws {
        self.choice = choice
        switch choice {
        case .none:
            throw AudioChoice.Invalid(description: "internal: no audio track for --audio none")
        case .ticks:
            signal = TickSignal(rate: Self.rate, offsetMilliseconds: offsetMilliseconds)
        case .tone(let hz):
            signal = ToneSignal(rate: Self.rate, hz: hz)
        case .music:
            guard let music else { throw AudioChoice.Invalid(description: "internal: music without a player") }
            signal = music
        }
        launch = try template.render(["bitrate": String(bitrate)])
        pipeline = try Pipeline(name: "audio", launch: launch)
        guard pipeline.hasElement(named: "encoded"),
              let src = pipeline.appSource(named: "samples", maxBuffers: 16) else {
            pipeline.stop(drain: false)
            throw GstError(element: "audio", message: "\(template.path) needs 'appsrc name=samples' and 'appsink name=encoded'")
        }
        let factory = pipeline.factoryName(ofElementNamed: "encoder") ?? "?"
        let priming = Self.primingSamples[factory]
        if priming == nil {
            warn("audio: the priming delay of encoder '\(factory)' is not known; the sound may come late by one AAC "
                 + "frame. Name an avenc_aac or voaacenc element 'encoder' in \(template.path)")
        }
        primingNanoseconds = MediaTime(priming ?? 0) * 1_000_000_000 / MediaTime(Self.rate)
        input = src
        try input.setCaps(Self.rawCaps)
        sink = pipeline.appSink(named: "encoded", runningTime: true, onSample: { [weak self] b, c in
            self?.fanOut(b, c)
        }, onEOS: {})
        try pipeline.play { event in
            if case .error(let e) = event { onError(e) }
        }
    }

    /// Draws the samples from where the track is up to running time `time` and hands them to the encoder.
    /// Called on the frame loop thread after each frame; a late loop that skipped frames gets one longer chunk,
    /// so the track never has a hole.
    public func advance(to time: MediaTime) {
        let end = Self.sample(at: time)
        guard end > written else { return }
        let frames = Int(end - written)
        let bytes = frames * Self.channels * 2
        guard let buffer = MediaBuffer.filled(bytes: bytes, { raw in
            signal.fill(raw.bindMemory(to: Int16.self), from: written)
        }) else { return }
        let pts = Self.time(ofSample: written)
        buffer.stamp(pts: pts, duration: Self.time(ofSample: end) - pts)
        written = end
        input.push(buffer)
    }

    /// The sample nearest running time `time` (frame times are whole nanoseconds; no overflow for years).
    static func sample(at time: MediaTime) -> Int64 {
        let s = time / 1_000_000_000, ns = time % 1_000_000_000
        return Int64(s) * Int64(rate) + Int64((ns * MediaTime(rate) + 500_000_000) / 1_000_000_000)
    }

    static func time(ofSample n: Int64) -> MediaTime {
        let s = MediaTime(n) / MediaTime(rate), rest = MediaTime(n) % MediaTime(rate)
        return s * 1_000_000_000 + rest * 1_000_000_000 / MediaTime(rate)
    }

    /// Holds every packet `milliseconds` before the outputs get it, as the video encoder does for
    /// `--inject-delay-ms`: the delay applies to the whole stream, not to one track.
    public func delay(by milliseconds: Double) {
        guard milliseconds > 0 else { return }
        let capacity = Int((milliseconds / 1000 * 50).rounded(.up)) * 2 + 16
        let line = DelayLine(delayMilliseconds: milliseconds, capacity: capacity) { [weak self] b, c in
            self?.handToSubscribers(b, c)
        }
        lock.withLock { delayLine = line }
    }

    private func fanOut(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        guard let pts = buffer.pts else { return }
        // The priming samples come first: moving every packet back by them puts each sound at its own time.
        // The first packet would start before zero; it holds only priming and is left out.
        guard pts >= primingNanoseconds else {
            lock.withLock { _primingDropped += 1 }
            return
        }
        let moved = buffer.restamped(pts: pts - primingNanoseconds, dts: pts - primingNanoseconds)
        let line = lock.withLock { () -> DelayLine? in
            _packets += 1
            _bytes += UInt64(buffer.size)
            return delayLine
        }
        if let line { line.push(moved, caps) } else { handToSubscribers(moved, caps) }
    }

    private func handToSubscribers(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        let subs = lock.withLock { Array(subscribers.values) }
        for s in subs { s(buffer, caps) }
    }

    public func subscribe(_ owner: AnyObject, _ handler: @escaping Subscriber) {
        lock.withLock { subscribers[ObjectIdentifier(owner)] = handler }
    }

    public func unsubscribe(_ owner: AnyObject) {
        _ = lock.withLock { subscribers.removeValue(forKey: ObjectIdentifier(owner)) }
    }

    public var encodedPackets: UInt64 { lock.withLock { _packets } }
    public var encodedBytes: UInt64 { lock.withLock { _bytes } }
    /// Sample chunks the encoder had no room for (dropped before encoding).
    public var dropped: UInt64 { input.dropped }

    /// Draws the track up to `time` (the end of the last frame), drains the encoder to the subscribers, stops.
    @discardableResult
    public func finish(at time: MediaTime, timeout: TimeInterval = 5) -> Bool {
        advance(to: time)
        input.endOfStream()
        let ok = pipeline.waitForEOS(timeout: timeout)
        pipeline.stop(drain: false)
        sink = nil
        if let line = lock.withLock({ delayLine }) {
            line.drain(timeout: timeout + Double(line.delayNanoseconds) / 1e9)
        }
        return ok
    }

    deinit { delayLine?.stop() }
}
