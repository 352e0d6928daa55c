import Foundation

/// One codec's encoder of the audio track (`pipelines/encode-CODEC.pipeline`): takes the drawn samples, moves each
/// packet back by the encoder's priming, and hands it to every output that takes this codec (through the delay
/// line of `--inject-delay-ms` when there is one).
///
/// `@unchecked Sendable`: counters are behind `lock` (subscribers and the delay line in `out`); the pipeline is driven
/// through GStreamer's thread-safe calls; `sink` is set in `init` and cleared by `finish` after EOS.
final class AudioEncoder: @unchecked Sendable {
    let codec: AudioCodec
    let launch: String
    private let pipeline: Pipeline
    private let input: AppSource
    private var sink: AppSink?
    /// Nanoseconds the encoded packets are moved back by (the encoder's priming).
    let primingNanoseconds: MediaTime
    private let lock = NSLock()
    private let out = EncodedFanOut()
    private var _packets: UInt64 = 0
    private var _bytes: UInt64 = 0

    /// `blocking`: for a render (`SceneRender`), nothing live: a push waits while the encoder is busy, nothing is
    /// dropped.
    init(codec: AudioCodec, template: PipelineTemplate, bitrate: Int, rawCaps: String, rate: Int, blocking: Bool = false,
         warn: @escaping @Sendable (String) -> Void, onError: @escaping @Sendable (GstError) -> Void) throws {
        self.codec = codec
        launch = try template.render(["bitrate": String(bitrate)])
        pipeline = try Pipeline(name: "audio-\(codec)", launch: launch)
        guard pipeline.hasElement(named: "encoded"),
              let src = pipeline.appSource(named: "samples", maxBuffers: 16, leaky: !blocking) else {
            pipeline.stop(drain: false)
            throw GstError(element: "audio", message: "\(template.path) needs 'appsrc name=samples' and 'appsink name=encoded'")
        }
        let factory = pipeline.factoryName(ofElementNamed: "encoder") ?? "?"
        let priming = AudioCodec.primingSamples[factory]
        if priming == nil {
            warn("audio: the priming delay of encoder '\(factory)' is not known; the sound may come late by one "
                 + "frame of the codec. Name an avenc_aac, voaacenc or opusenc element 'encoder' in \(template.path)")
        }
        primingNanoseconds = MediaTime(priming ?? 0) * 1_000_000_000 / MediaTime(rate)
        input = src
        if blocking {
            input.set("is-live", "false")
            input.set("block", "true")
        }
        try input.setCaps(rawCaps)
        sink = pipeline.appSink(named: "encoded", runningTime: true, onSample: { [weak self] b, c in
            self?.fanOut(b, c)
        }, onEOS: {})
        try pipeline.play { event in
            if case .error(let e) = event { onError(e) }
        }
    }

    /// Samples drawn by the track (the buffer is shared by every encoder; none writes to it).
    func push(_ buffer: MediaBuffer) { input.push(buffer) }

    func delay(by milliseconds: Double) {
        let capacity = Int((milliseconds / 1000 * 50).rounded(.up)) * 2 + 16
        out.delay(by: milliseconds, capacity: capacity)
    }

    private func fanOut(_ buffer: MediaBuffer, _ caps: MediaCaps?) {
        guard let pts = buffer.pts else { return }
        // The priming samples come first: moving every packet back by them puts each sound at its own time.
        // The first packet would start before zero; it holds only priming and is left out.
        guard pts >= primingNanoseconds else { return }
        let moved = primingNanoseconds == 0 ? buffer
            : buffer.restamped(pts: pts - primingNanoseconds, dts: pts - primingNanoseconds)
        lock.withLock {
            _packets += 1
            _bytes += UInt64(buffer.size)
        }
        out.hand(moved, caps)
    }

    func subscribe(_ owner: AnyObject, _ handler: @escaping AudioTrack.Subscriber) { out.subscribe(owner, handler) }

    func unsubscribe(_ owner: AnyObject) { out.unsubscribe(owner) }

    var packets: UInt64 { lock.withLock { _packets } }
    var bytes: UInt64 { lock.withLock { _bytes } }
    /// Sample chunks the encoder had no room for (dropped before encoding).
    var dropped: UInt64 { input.dropped }

    /// Ends the input, waits for the last packets to reach the subscribers, stops.
    func finish(timeout: TimeInterval) -> Bool {
        let ok = out.finish(pipeline, input: input, timeout: timeout)
        sink = nil
        return ok
    }
}
