import Foundation

/// Finds the onsets of the ticks of `--audio ticks` in decoded sound: the first sample louder than an eighth of
/// full scale after at least 100 ms of quiet. A tick that stays loud longer than 25 ms is a marker (every tenth
/// second). Also notices holes in the sound's timeline (a packet lost, a stream that stalled), told apart from the
/// steps a receiver makes on purpose when it lines the sound up with the picture by the RTCP sender reports
/// (`shifted(by:)`): those move the timeline without a sample missing.
///
/// Pure bookkeeping over samples and timestamps: the probe feeds it from its audio appsink.
public struct TickDetector: Sendable {
    public struct Onset: Sendable, Equatable {
        /// Running time of the onset's sample, in nanoseconds.
        public var time: MediaTime
        public var marker: Bool
    }

    public static let threshold: Int32 = 4096
    /// How long the tick's sine takes from its start to the threshold (0.04 ms): taken off each onset, so an
    /// onset is the tick's first sample, not the first loud one.
    static let rise = MediaTime((asin(Double(threshold) / (TickSignal.amplitude * Double(Int16.max)))
                                 / (2 * .pi * TickSignal.frequency) * 1e9).rounded())
    static let quietBefore: MediaTime = 100_000_000
    static let endAfterQuiet: MediaTime = 30_000_000
    static let markerLongerThan: MediaTime = 25_000_000
    /// A buffer that starts this much after the previous one ended is a gap.
    static let gapTolerance: MediaTime = 2_000_000

    private var onset: MediaTime?
    private var lastLoud: MediaTime?
    private var expected: MediaTime?
    public private(set) var gaps = 0
    public private(set) var gapMilliseconds = 0.0
    /// Forward steps the receiver announced and the timeline has not made yet (nanoseconds).
    private var announced: [MediaTime] = []
    /// Steps of the timeline that were the receiver's alignment, not sound missing.
    public private(set) var alignments = 0
    public private(set) var samples: UInt64 = 0
    /// How much sound was decoded, in nanoseconds (the sum of the buffers' lengths).
    public private(set) var heard: MediaTime = 0

    public init() {}

    /// Feeds interleaved signed 16-bit samples beginning at running time `pts`; returns the ticks that ended here.
    /// The last jump of the timeline (a gap, or packets that overlap the ones before): when and by how much.
    public private(set) var lastJump: (at: MediaTime, by: Int64)?

    /// The receiver moved the sound's timeline by `delta` nanoseconds (rtpbin's ts-offset for the sound changed):
    /// the next forward jump of about that size is that move, not a hole. Backward moves overlap what was heard and
    /// never look like holes.
    public mutating func shifted(by delta: Int64) {
        guard delta > Int64(Self.gapTolerance) else { return }
        announced.append(MediaTime(delta))
        if announced.count > 8 { announced.removeFirst() }
    }

    public mutating func feed(_ data: UnsafeBufferPointer<Int16>, channels: Int, rate: Int, pts: MediaTime) -> [Onset] {
        if let expected, pts > expected + Self.gapTolerance {
            var hole = pts - expected
            // An announced step explains the jump, or the part of it that is its own size.
            if let i = announced.firstIndex(where: { $0 <= hole + Self.gapTolerance }) {
                hole = hole > announced[i] ? hole - announced[i] : 0
                announced.remove(at: i)
                alignments += 1
            }
            if hole > Self.gapTolerance {
                gaps += 1
                gapMilliseconds += Double(hole) / 1e6
            }
        }
        if let expected, pts > expected + Self.gapTolerance || pts + Self.gapTolerance < expected {
            lastJump = (pts, Int64(pts) - Int64(expected))
            // Time went back (packets that overlap earlier ones): a tick under way cannot be measured across it,
            // and none starts before the sound was quiet for a while again.
            if pts < expected {
                onset = nil
                lastLoud = pts
            }
        } else {
            lastJump = nil
        }
        let frames = data.count / max(1, channels)
        var found: [Onset] = []
        for i in 0..<frames {
            let t = pts + MediaTime(i) * 1_000_000_000 / MediaTime(rate)
            var loud = false
            for c in 0..<channels where abs(Int32(data[i * channels + c])) >= Self.threshold { loud = true }
            if loud {
                if onset == nil, lastLoud.map({ t >= $0 + Self.quietBefore }) ?? true {
                    onset = t >= Self.rise ? t - Self.rise : 0
                }
                lastLoud = t
            } else if let start = onset, let last = lastLoud, t >= last + Self.endAfterQuiet {
                found.append(Onset(time: start, marker: last > start && last - start > Self.markerLongerThan))
                onset = nil
            }
        }
        samples += UInt64(frames)
        let length = MediaTime(frames) * 1_000_000_000 / MediaTime(rate)
        heard += length
        expected = pts + length
        return found
    }
}
