import Foundation

/// The A/V offset of a stream carrying `--audio ticks`: where each tick's onset falls against the picture's
/// second boundary, both on the receiver's timeline (the decoded buffers' running times).
///
/// The picture's timeline comes from the timecode strip: frame f of a stream at `fps` frames a second belongs to
/// second f / fps, whose boundary is at `pts − (f mod fps) / fps` (the frames are evenly spaced). The tick of
/// second k starts on that boundary in the source; its offset is `onset − boundary(k)`: positive when the sound
/// comes late. Which second a tick belongs to is the nearest boundary (offsets within ±500 ms), and every tenth
/// second's long tick (a marker) settles whole seconds (offsets within ±5 s, from the first marker on).
///
/// A receiver aligns the two tracks when it learns how they relate (an RTSP client from the first RTCP sender
/// reports, a few seconds after joining), and one track's timeline jumps then. Ticks placed before a jump in the
/// first `settleSeconds`, and a second's repeated onset among them, are left out as "before the tracks were
/// aligned" (after a step back, every onset up to where the old timeline had reached: a file ffmpeg wrote stepped its
/// sound back 218 ms, and the tick heard just before the step, stamped after where it landed, read +258 ms);
/// later jumps are counted and kept. A step
/// the receiver announces (`receiverShifted(by:)`) counts as that alignment whatever its size: rtpbin's first one can
/// be 1.3 ms, under what a jump of the timeline is told apart from jitter by, and a tick before it read 1.3 ms off.
///
/// Pure bookkeeping: the probe feeds frames and onsets; `report()` sums them up.
public struct AVSyncStats: Sendable {
    public struct Tick: Codable, Sendable, Equatable {
        /// The second of the source's timeline the tick marks.
        public var second: Int64
        /// Onset − the picture's second boundary, in milliseconds.
        public var offsetMs: Double
        public var marker: Bool
    }

    public struct Report: Codable, Sendable {
        /// Ticks found and placed against the picture.
        public var ticks: Int
        /// Seconds between the first and last placed tick with no tick of their own.
        public var missingTicks: Int
        /// Onsets that were not a second's first tick (a glitch, a repeated packet).
        public var strayOnsets: Int
        /// Holes in the sound's timeline and their total length.
        public var gaps: Int
        public var gapMs: Double
        public var offsetMs: Summary?
        /// The offset's trend, from a least-squares line through every tick (nil under 10 s of ticks).
        public var driftMsPerHour: Double?
        /// Ticks left out because they came before the receiver aligned the tracks.
        public var beforeAlignment: Int
        /// Jumps of either track's timeline after that (a resync, a glitch), and the largest.
        public var jumps: Int
        public var largestJumpMs: Double
        /// The ticks, oldest first (the last `keep`).
        public var perTick: [Tick]
        /// False when the stream carried no sound at all.
        public var decoded = true
        /// Seconds of sound decoded (a stream whose sound stopped shows it here).
        public var heardSeconds: Double = 0

        /// What is known of a stream without sound.
        public static let silent = Report(ticks: 0, missingTicks: 0, strayOnsets: 0, gaps: 0, gapMs: 0, offsetMs: nil,
                                          driftMsPerHour: nil, beforeAlignment: 0, jumps: 0, largestJumpMs: 0,
                                          perTick: [], decoded: false)
    }

    public struct Summary: Codable, Sendable, Equatable {
        public var p1: Double
        public var p50: Double
        public var p99: Double
        public var min: Double
        public var max: Double
        public var mean: Double
    }

    /// Readings held until the frame rate is known.
    private var early: [(frame: UInt64, pts: MediaTime)] = []
    private var first: (frame: UInt64, pts: MediaTime)?
    private var spacings: [Double] = []
    public private(set) var fps: Int?
    /// The boundary of each second the picture showed, from its first frame seen (nanoseconds, signed).
    private var boundaries: [Int64: Int64] = [:]
    private var newestSecond: Int64?
    private var pending: [TickDetector.Onset] = []
    private var placed: [Int64: Tick] = [:]
    private var order: [Int64] = []
    /// Whole seconds the sound is off by, settled by the last marker.
    private var shiftSeconds: Int64 = 0
    private var stray = 0
    /// When each stray onset of the settling time came (seconds): one before an alignment is not counted.
    private var settlingStrays: [Double] = []
    /// Onset time (s) of each placed tick, for the drift line.
    private var onsetSeconds: [Int64: Double] = [:]
    private let keep: Int
    public static let settleSeconds: MediaTime = 15_000_000_000
    /// Jumps of 2 ms or more in either timeline count.
    static let jumpTolerance: Int64 = 2_000_000
    private var discardBefore: MediaTime?
    private var beforeAlignment = 0
    private var jumps = 0
    private var largestJump: Int64 = 0
    /// The latest running time either track brought here.
    private var latest: MediaTime = 0
    /// A step the receiver announces of at least this much is an alignment; rtpbin's later fine tuning moves a
    /// track by microseconds (4–16 µs seen after each RTCP sender report) and is not.
    static let alignmentStep: Int64 = 250_000
    /// What may be between the receiver's jitterbuffer and here when it announces a step (depayloader, decoder,
    /// queues): onsets this far past the latest running time seen were moved by the step or not, nobody knows.
    static let inFlight: MediaTime = 300_000_000

    public init(keep: Int = 86_400) { self.keep = max(1, keep) }

    /// A decoded frame whose strip read `frame`, with its running time.
    public mutating func frame(_ frame: UInt64, pts: MediaTime) {
        latest = max(latest, pts)
        guard let fps else {
            if first == nil { first = (frame, pts) }
            if let last = early.last, frame > last.frame, pts > last.pts {
                spacings.append(Double(pts - last.pts) / Double(frame - last.frame))
            }
            early.append((frame, pts))
            if early.count > 1_000 { early.removeFirst() }
            // The frame rate from the median spacing of consecutive frames: a jump of the timeline while the
            // receiver settles (ffmpeg's first frames) does not move it.
            if spacings.count >= 30 {
                let median = spacings.sorted()[spacings.count / 2]
                self.fps = max(1, Int((1e9 / median).rounded()))
                let held = early
                early = []
                for r in held { self.frame(r.frame, pts: r.pts) }
                resolve(final: false)
            }
            return
        }
        let second = Int64(frame / UInt64(fps))
        if boundaries[second] == nil {
            let into = Int64(frame % UInt64(fps)) * 1_000_000_000 / Int64(fps)
            boundaries[second] = Int64(pts) - into
            if let previous = boundaries[second - 1] {
                let jump = Int64(pts) - into - previous - 1_000_000_000
                if abs(jump) >= Self.jumpTolerance { timelineJumped(at: pts, by: jump) }
            }
            if boundaries.count > keep + 16, let oldest = boundaries.keys.min() { boundaries[oldest] = nil }
        }
        if second > (newestSecond ?? Int64.min) {
            newestSecond = second
            resolve(final: false)
        }
    }

    /// One track's timeline moved by `by` nanoseconds at `at` (the picture's boundaries, the sound's packets).
    public mutating func timelineJumped(at time: MediaTime, by: Int64) {
        guard let start = first?.pts else { return }
        if time < start + Self.settleSeconds {
            // A step back overlaps what came before it: onsets heard before the step up to where its timeline had
            // reached (`time − by`) are on the old timeline, and later ones there cannot be told from them.
            leaveOut(before: time + MediaTime(max(0, -by)))
        } else {
            jumps += 1
            largestJump = max(largestJump, abs(by))
        }
    }

    /// The sound brought here up to running time `end`.
    public mutating func heard(upTo end: MediaTime) { latest = max(latest, end) }

    /// The receiver moved one track's timeline by `step` nanoseconds to line the tracks up (rtpbin's ts-offset),
    /// for the buffers it has yet to send on. While the tracks settle, every onset up to what either track brought
    /// here, and what may still be on its way, is left out (a step later than that is counted as a jump when the
    /// timeline shows it). Fine tuning under `alignmentStep` is neither.
    public mutating func receiverShifted(by step: Int64) {
        guard abs(step) >= Self.alignmentStep else { return }
        if let start = first?.pts, latest >= start + Self.settleSeconds { return }
        leaveOut(before: latest + Self.inFlight)
    }

    /// Onsets before `time` came before the tracks were aligned.
    private mutating func leaveOut(before time: MediaTime) {
        discardBefore = max(discardBefore ?? 0, time)
        for k in order where onsetSeconds[k].map({ $0 * 1e9 < Double(time) }) ?? false {
            placed[k] = nil
            onsetSeconds[k] = nil
            beforeAlignment += 1
        }
        order.removeAll { placed[$0] == nil }
        let early = settlingStrays.filter { $0 * 1e9 < Double(time) }.count
        stray -= early
        beforeAlignment += early
        settlingStrays.removeAll { $0 * 1e9 < Double(time) }
    }

    /// A tick's onset on the same timeline.
    public mutating func onset(_ o: TickDetector.Onset) {
        pending.append(o)
        if pending.count > 64 { pending.removeFirst() }
        resolve(final: false)
    }

    /// Places the onsets whose second the picture has passed (or all, at the end).
    mutating func resolve(final: Bool) {
        guard fps != nil, let newest = newestSecond, let latest = boundaries[newest] else { return }
        var waiting: [TickDetector.Onset] = []
        for o in pending {
            let t = Int64(o.time)
            // Which second: the nearest boundary, counted from the newest one the picture showed.
            let raw = Double(t - latest) / 1e9 + Double(newest)
            var k: Int64
            if o.marker {
                k = Int64((raw / 10).rounded()) * 10
                shiftSeconds = Int64((raw - Double(k)).rounded())
            } else {
                k = Int64((raw - Double(shiftSeconds)).rounded())
            }
            guard final || newest > k + 1 else {
                waiting.append(o)
                continue
            }
            if let cut = discardBefore, o.time < cut {
                beforeAlignment += 1
                continue
            }
            guard let b = boundary(near: k) else { continue }
            let offset = Double(t - b) / 1e6
            place(Tick(second: k, offsetMs: offset, marker: o.marker), at: Double(t) / 1e9)
        }
        pending = waiting
    }

    /// The boundary of second k: its own when its first frame was seen, else one from a neighbour.
    private func boundary(near k: Int64) -> Int64? {
        if let b = boundaries[k] { return b }
        for d in 1...3 {
            if let b = boundaries[k - Int64(d)] { return b + Int64(d) * 1_000_000_000 }
            if let b = boundaries[k + Int64(d)] { return b - Int64(d) * 1_000_000_000 }
        }
        return nil
    }

    private mutating func place(_ tick: Tick, at x: Double) {
        guard placed[tick.second] == nil else {
            stray += 1
            if let start = first?.pts, x * 1e9 < Double(start + Self.settleSeconds), settlingStrays.count < 64 {
                settlingStrays.append(x)
            }
            return
        }
        placed[tick.second] = tick
        onsetSeconds[tick.second] = x
        order.append(tick.second)
        if order.count > keep {
            let gone = order.removeFirst()
            placed[gone] = nil
            onsetSeconds[gone] = nil
        }
    }

    /// The figures so far; `gaps`, `gapMs` and `heardSeconds` come from the detector.
    public mutating func report(gaps: Int, gapMs: Double, heardSeconds: Double) -> Report {
        resolve(final: true)
        let ticks = order.map { placed[$0]! }
        var missing = 0
        if let lo = ticks.map(\.second).min(), let hi = ticks.map(\.second).max() {
            missing = Int(hi - lo + 1) - ticks.count
        }
        return Report(ticks: ticks.count, missingTicks: missing, strayOnsets: stray, gaps: gaps, gapMs: gapMs,
                      offsetMs: Self.summary(ticks.map(\.offsetMs)),
                      driftMsPerHour: Self.drift(order.compactMap { k in onsetSeconds[k].map { ($0, placed[k]!.offsetMs) } }),
                      beforeAlignment: beforeAlignment, jumps: jumps, largestJumpMs: Double(largestJump) / 1e6,
                      perTick: ticks, heardSeconds: heardSeconds)
    }

    /// The ticks placed so far for seconds after `second` (oldest first), without settling the ones still waiting
    /// for the picture: what a running soak charts each second. Ticks of the first `settleSeconds` are left out:
    /// they are dropped again if the receiver aligns its tracks then.
    public func ticks(after second: Int64) -> [Tick] {
        guard let start = first?.pts else { return [] }
        let settled = Double(start + Self.settleSeconds) / 1e9
        return order.lazy.filter { $0 > second }.compactMap { k in
            guard let t = placed[k], let at = onsetSeconds[k], at >= settled else { return nil }
            return t
        }
    }

    /// The slope of a least-squares line through (onset s, offset ms), per hour; nil under 10 s of ticks.
    static func drift(_ points: [(Double, Double)]) -> Double? {
        guard points.count >= 2, let a = points.first?.0, let b = points.last?.0, b - a >= 10 else { return nil }
        let n = Double(points.count)
        let mx = points.reduce(0) { $0 + $1.0 } / n, my = points.reduce(0) { $0 + $1.1 } / n
        let sxy = points.reduce(0) { $0 + ($1.0 - mx) * ($1.1 - my) }
        let sxx = points.reduce(0) { $0 + ($1.0 - mx) * ($1.0 - mx) }
        return sxx > 0 ? sxy / sxx * 3600 : nil
    }

    static func summary(_ values: [Double]) -> Summary? {
        guard !values.isEmpty else { return nil }
        let s = values.sorted()
        func pct(_ p: Double) -> Double { s[min(s.count - 1, Int((p * Double(s.count - 1)).rounded()))] }
        return Summary(p1: pct(0.01), p50: pct(0.5), p99: pct(0.99), min: s.first!, max: s.last!,
                       mean: s.reduce(0, +) / Double(s.count))
    }
}
