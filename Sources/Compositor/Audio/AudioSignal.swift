import Foundation

/// What the audio track draws, asked for in order and without holes: the n-th sample is at n / rate seconds of the
/// frame clock. The generated signals compute it from the sample position alone; music (`MusicPlayer`) reads on
/// from where it stands.
public protocol AudioSignal: Sendable {
    /// Fills `out` (interleaved stereo, signed 16 bit) with the frames starting at sample `start`.
    func fill(_ out: UnsafeMutableBufferPointer<Int16>, from start: Int64)
}

/// The A/V sync signal: a 1 kHz burst beginning exactly at every whole second of the frame clock from the first
/// on (plus an injected offset), 10 ms long, and 40 ms long at every tenth second so a reader can tell which second it is
/// even when audio and picture are far apart. The burst starts at phase 0 at full amplitude: its onset is a
/// single sample.
public struct TickSignal: AudioSignal {
    public static let frequency = 1000.0
    public static let amplitude = 0.5
    public static let shortSeconds = 0.010
    public static let markerSeconds = 0.040
    /// Every this many seconds the tick is a marker (long).
    public static let markerPeriod = 10

    public let rate: Int
    /// Where the ticks fall relative to the whole seconds, in samples (`--inject-av-offset-ms`).
    public let offsetSamples: Int64

    public init(rate: Int, offsetMilliseconds: Double = 0) {
        self.rate = rate
        offsetSamples = Int64((offsetMilliseconds * Double(rate) / 1000).rounded())
    }

    public func fill(_ out: UnsafeMutableBufferPointer<Int16>, from start: Int64) {
        let frames = out.count / 2
        let r = Int64(rate)
        let shortLen = Int64(Self.shortSeconds * Double(rate))
        let markerLen = Int64(Self.markerSeconds * Double(rate))
        let scale = Self.amplitude * Double(Int16.max)
        for i in 0..<frames {
            let n = start + Int64(i) - offsetSamples
            var v: Int16 = 0
            // No tick at second 0: the encoder's first packet, which holds it, is only priming and is left out.
            if n >= r {
                let second = n / r
                let into = n % r
                let length = second % Int64(Self.markerPeriod) == 0 ? markerLen : shortLen
                if into < length {
                    v = Int16(scale * sin(2 * .pi * Self.frequency * Double(into) / Double(rate)))
                }
            }
            out[2 * i] = v
            out[2 * i + 1] = v
        }
    }
}

/// A continuous sine at `hz`, a quarter of full scale.
public struct ToneSignal: AudioSignal {
    public let rate: Int
    public let hz: Double

    public init(rate: Int, hz: Double) {
        self.rate = rate
        self.hz = hz
    }

    public func fill(_ out: UnsafeMutableBufferPointer<Int16>, from start: Int64) {
        let frames = out.count / 2
        let scale = 0.25 * Double(Int16.max)
        // The phase from whole seconds and the sample within the second, so it stays exact after hours.
        let r = Int64(rate)
        for i in 0..<frames {
            let n = start + Int64(i)
            let turnsBefore = (hz * Double(n / r)).truncatingRemainder(dividingBy: 1)
            let v = Int16(scale * sin(2 * .pi * (turnsBefore + hz * Double(n % r) / Double(rate))))
            out[2 * i] = v
            out[2 * i + 1] = v
        }
    }
}
