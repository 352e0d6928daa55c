/// What a soak's own streams dropped, told apart as a report built from Prometheus tells them: frames lost before any
/// output (late in the frame loop, dropped at the encoders) are the source's; frames an output's own queue dropped (an
/// RTSP viewer too slow to take them) are that output's. A counter that falls (an RTSP media replaced when its last
/// viewer left) counts again from 0.
struct DropTally {
    private var lastSource: [Int: UInt64] = [:]
    private var lastOutput: [String: UInt64] = [:]
    /// Each output's own drops so far, keyed "stream I: OUTPUT".
    private(set) var outputs: [String: Int] = [:]

    /// The source's drops since the last call, over all streams; the outputs' own go to `outputs`.
    mutating func advance(_ streams: [LiveSession.Status]) -> Int {
        var source = 0
        for (i, s) in streams.enumerated() {
            source += Self.rise(to: Self.sourceDropped(s), from: lastSource[i] ?? 0)
            lastSource[i] = Self.sourceDropped(s)
            for o in s.outputs {
                let key = "stream \(i): \(o.id)"
                outputs[key, default: 0] += Self.rise(to: o.dropped, from: lastOutput[key] ?? 0)
                lastOutput[key] = o.dropped
            }
        }
        return source
    }

    /// The outputs that dropped frames, with how many; nil when none did (what soak.json's `outputDropped` holds).
    var outputsThatDropped: [String: Int]? {
        let dropped = outputs.filter { $0.value > 0 }
        return dropped.isEmpty ? nil : dropped
    }

    /// Frames a stream lost before any output.
    static func sourceDropped(_ s: LiveSession.Status) -> UInt64 { s.late + s.encoderDropped }

    private static func rise(to now: UInt64, from before: UInt64) -> Int { Int(now >= before ? now - before : now) }
}
