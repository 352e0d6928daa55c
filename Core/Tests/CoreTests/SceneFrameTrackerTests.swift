import CompositorCore
import Testing

@Suite struct SceneFrameTrackerTests {
    /// A source's scene frame for each frame number: played, paused for `pauses` (first frame, length), played on.
    static func timeline(frames: Int, pauses: [(Int, Int)]) -> [UInt64] {
        var scene: UInt64 = 0
        return (0..<frames).map { n in
            defer { if !pauses.contains(where: { n >= $0.0 && n < $0.0 + $0.1 }) { scene += 1 } }
            return scene
        }
    }

    /// Compares the frames `steps` apart in turn (as a busy comparer does, or a soak's one in N): pictures whose
    /// scene frame was not among their candidates, and the most of them in a row.
    func follow(_ truth: [UInt64], steps: [Int], _ t: inout SceneFrameTracker) -> (missed: [Int], longest: Int) {
        var n = 0, k = 0, missed: [Int] = [], run = 0, longest = 0
        while n < truth.count {
            if t.candidates(for: UInt64(n)).contains(truth[n]) {
                t.matched(frame: UInt64(n), scene: truth[n])
                run = 0
            } else {
                missed.append(n)
                run += 1
                longest = max(longest, run)
            }
            n += steps[k % steps.count]; k += 1
        }
        return (missed, longest)
    }

    @Test func withoutAPauseTheSceneIsTheFrame() {
        var t = SceneFrameTracker()
        #expect(t.candidates(for: 0) == [0])
        #expect(t.candidates(for: 90).first == 90)
        #expect(t.behind == 0)
    }

    @Test func pausesAreFollowedFrameByFrame() {
        let truth = Self.timeline(frames: 600, pauses: [(100, 60), (300, 1), (400, 90)])
        var t = SceneFrameTracker()
        #expect(follow(truth, steps: [1], &t).missed.isEmpty)
        #expect(t.behind == 151)
    }

    @Test func pausesAreFollowedAcrossSkippedFrames() {
        // A comparer busy for 1 to 5 frames at a time, and a soak comparing one picture in 30: a pause starting or
        // ending between two compared pictures is among the moments between, so no picture misses.
        let truth = Self.timeline(frames: 3000, pauses: [(100, 60), (333, 7), (1000, 600), (2001, 2)])
        var busy = SceneFrameTracker()
        #expect(follow(truth, steps: [1, 3, 5, 2, 4], &busy).missed.isEmpty)
        var soak = SceneFrameTracker()
        #expect(follow(truth, steps: [30], &soak).missed.isEmpty)
    }

    @Test func aPauseBetweenComparesFarApartIsFoundAgain() {
        // A comparer 12 to 30 frames behind with a span of 20: a pause can begin and end out of reach of one picture's
        // candidates, and the pictures after it miss until a sweep finds the scene frame; it does within a few, and
        // from then on every picture matches.
        let truth = Self.timeline(frames: 6000, pauses: [(100, 60), (1000, 37), (2500, 600), (4001, 13)])
        var t = SceneFrameTracker(maxSpan: 20)
        let (missed, longest) = follow(truth, steps: [12, 30, 17, 25], &t)
        #expect(longest <= 4, "missed in a row: \(longest) (\(missed))")
        #expect(missed.allSatisfy { $0 > 100 })
        #expect(t.last.map { truth[Int($0.frame)] == $0.scene } == true)
    }

    @Test func theLikeliestComeFirst() {
        var t = SceneFrameTracker(maxSpan: 4)
        t.matched(frame: 100, scene: 40)
        #expect(t.behind == 60)
        // Played on, paused, then every moment between, latest first.
        #expect(t.candidates(for: 105) == [45, 40, 44, 43, 42, 41])
        #expect(t.candidates(for: 101) == [41, 40])
        // An older frame (out of order) or the same one: the lag as it stands.
        #expect(t.candidates(for: 90) == [30])
        #expect(t.candidates(for: 100) == [40])
        // A wider span is swept a part at a time from both ends, and around again; and beyond played throughout
        // (a lag overestimated), nearest first.
        #expect(t.candidates(for: 108) == [48, 40, 47, 46, 41, 42, 49])
        #expect(t.candidates(for: 108) == [48, 40, 45, 44, 43, 50])
        #expect(t.candidates(for: 108) == [48, 40, 43, 42, 45, 46, 51])
        #expect(t.candidates(for: 108) == [48, 40, 41, 47, 52])
        t.matched(frame: 108, scene: 44)
        #expect(t.candidates(for: 110) == [46, 44, 45])
    }

    /// Compares pictures `step` frames apart from frame `from`, as the comparer does: the first candidate that
    /// matches when it is the first (the lag unchanged) or as good as is typical, else the likest of those that match
    /// is weighed. `likeness(candidate, truth)` is the PSNR of a candidate that matches the picture of scene frame
    /// `truth`, nil for one that does not. Returns the pictures that matched nothing, and the frame from which the
    /// tracker stood at the truth for good.
    func compare(_ truth: [UInt64], from: Int, step: Int, _ t: inout SceneFrameTracker,
                 likeness: (UInt64, UInt64) -> Double?) -> (missed: [Int], settled: Int?) {
        var missed: [Int] = [], settled: Int?
        for n in stride(from: from, to: truth.count, by: step) {
            var likest: (scene: UInt64, quality: Double)?, taken = false
            for (i, c) in t.candidates(for: UInt64(n)).enumerated() {
                guard let q = likeness(c, truth[n]) else { continue }
                if i == 0 || t.isTypical(q) { t.matched(frame: UInt64(n), scene: c, quality: q); taken = true; break }
                if likest.map({ q > $0.quality }) ?? true { likest = (c, q) }
            }
            if !taken, let likest { t.found(frame: UInt64(n), scene: likest.scene, quality: likest.quality) }
            if !taken && likest == nil { missed.append(n) }
            let atTruth = t.last.map { truth[Int($0.frame)] == $0.scene } == true
            if atTruth { settled = settled ?? n } else { settled = nil }
        }
        return (missed, settled)
    }

    @Test func aTwinTakenAtOneSizeGivesWayToTheTruthAtAnother() {
        // The everything hour: the info panel repeats exactly every 925 frames at 1280x720 (its ticker's loop twice),
        // so a sweep there may stand on a twin 925 frames back (a lag overestimated). At 1024x576 that is no twin;
        // the pictures there have near twins every 472 frames (PSNR 28 dB where the stream reads 55). The truth lies
        // beyond played throughout from the twin: the sweep ahead finds it, and the near twins met on the way are
        // not taken for it.
        let truth = Self.timeline(frames: 12000, pauses: [(100, 60), (2000, 60), (4000, 60)])
        var t = SceneFrameTracker()
        t.matched(frame: 4990, scene: truth[4990], quality: 55)
        t.matched(frame: 5000, scene: truth[5000] - 925, quality: 55)
        let (missed, settled) = compare(truth, from: 5010, step: 10, &t) { c, s in
            c == s ? 55 : abs(Int(c) - Int(s)) % 472 == 0 ? 28 : nil
        }
        // The sweep ahead moves 20 frames a picture (a third of `maxSpan`): 925 frames take about 46 pictures, which
        // match nothing until then, or only a near twin.
        #expect(settled.map { $0 < 5010 + 60 * 10 } == true, "settled at \(String(describing: settled)), missed \(missed.count)")
        #expect(missed.count < 50, "\(missed)")
        #expect(t.last.map { truth[Int($0.frame)] == $0.scene } == true)
    }

    @Test func aStreamPoorThroughoutIsTakenAsItIs() {
        // Every picture matches only at PSNR 30 after a clean start (a server that re-encodes): the sweeps hold the
        // poorer matches for `patience` pictures, then take the likest and follow it.
        let truth = Self.timeline(frames: 6000, pauses: [(1000, 90)])
        var t = SceneFrameTracker(patience: 5)
        t.matched(frame: 900, scene: truth[900], quality: 55)
        let (_, settled) = compare(truth, from: 1200, step: 10, &t) { c, s in c == s ? 30 : nil }
        #expect(settled != nil)
        #expect(t.typicalQuality.map { $0 < 40 } == true, "\(String(describing: t.typicalQuality))")
    }

    @Test func aMatchThatCannotBeIsIgnored() {
        var t = SceneFrameTracker()
        t.matched(frame: 10, scene: 20)
        #expect(t.last == nil)
        t.matched(frame: 50, scene: 30)
        t.matched(frame: 40, scene: 40)
        #expect(t.last?.frame == 50)
    }

    @Test func aJoinAfterAPauseCannotBeKnown() {
        // Documented limit: the tracker starts at no lag.
        var t = SceneFrameTracker()
        #expect(t.candidates(for: 1000) == [1000])
    }
}
