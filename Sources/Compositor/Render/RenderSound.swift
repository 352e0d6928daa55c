import Foundation

/// The sound of a render: the signal drawn sample by sample on the frames' timeline (sample k at k ÷ 48000 s, as the
/// live track draws it), encoded once to AAC with the encoder's priming taken off (`AudioEncoder`, blocking: nothing
/// dropped), and handed to every file.
final class RenderSound {
    private let signal: any AudioSignal
    private let encoder: AudioEncoder
    private let failure = Latest<String?>(nil)
    private var written: Int64 = 0

    init(signal: any AudioSignal, warn: @escaping @Sendable (String) -> Void, to files: [RenderFile]) throws {
        self.signal = signal
        let failure = self.failure
        encoder = try AudioEncoder(codec: .aac, template: PipelineTemplate.load("encode-aac"), bitrate: 128_000,
                                   rawCaps: AudioTrack.rawCaps, rate: AudioTrack.rate, blocking: true, warn: warn,
                                   onError: { e in if failure.value == nil { failure.value = e.description } })
        for file in files { encoder.subscribe(file) { buffer, caps in file.push(sound: buffer, caps: caps) } }
    }

    /// Draws the samples from where the sound is up to running time `time`.
    func draw(upTo time: MediaTime) throws {
        if let e = failure.value { throw SceneRender.Refusal(description: "the sound's encoder failed: \(e)") }
        let end = AudioTrack.sample(at: time)
        guard end > written else { return }
        let start = written
        guard let buffer = MediaBuffer.filled(bytes: Int(end - start) * AudioTrack.channels * 2, { raw in
            signal.fill(raw.bindMemory(to: Int16.self), from: start)
        }) else { throw SceneRender.Refusal(description: "no memory for the sound") }
        let pts = AudioTrack.time(ofSample: start)
        buffer.stamp(pts: pts, duration: AudioTrack.time(ofSample: end) - pts)
        written = end
        encoder.push(buffer)
    }

    /// The last packets handed on.
    func finish() throws {
        guard encoder.finish(timeout: 60) else {
            throw SceneRender.Refusal(description: "the sound's encoder did not finish: \(failure.value ?? "no end of stream")")
        }
    }
}
