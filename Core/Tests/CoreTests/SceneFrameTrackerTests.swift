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
    func follow(_ truth: [UInt64], steps: [Int], _ t: inout SceneFrameTracker, from: Int = 0) -> (missed: [Int], longest: Int) {
        var n = from, k = 0, missed: [Int] = [], run = 0, longest = 0
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
        // (the lag overestimated), nearest first.
        #expect(t.candidates(for: 108) == [48, 40, 47, 46, 41, 42, 49])
        #expect(t.candidates(for: 108) == [48, 40, 45, 44, 43, 50])
        #expect(t.candidates(for: 108) == [48, 40, 43, 42, 45, 46, 51])
        #expect(t.candidates(for: 108) == [48, 40, 41, 47, 52])
        t.matched(frame: 108, scene: 44)
        #expect(t.candidates(for: 110) == [46, 44, 45])
    }

    @Test func aTwinThatPutTheSceneTooFarBehindIsLeftForTheTruth() {
        // The everything hour: the info panel is the same picture every 925 frames at 1280x720 (its ticker's loop
        // twice), so a sweep there may stand on a twin 925 frames back, the lag overestimated. At 1024x576 that is
        // no twin, and the truth lies beyond played throughout: before, no candidate went there and every picture
        // of the span read as corrupt. The sweep ahead finds it, 20 frames a picture (a third of `maxSpan`).
        let truth = Self.timeline(frames: 12000, pauses: [(100, 60), (2000, 60), (4000, 60)])
        var t = SceneFrameTracker()
        t.matched(frame: 5000, scene: truth[5000] - 925)
        let (missed, _) = follow(truth, steps: [10], &t, from: 5010)
        #expect(t.last.map { truth[Int($0.frame)] == $0.scene } == true)
        #expect(missed.count < 60 && missed.allSatisfy { $0 < 5010 + 60 * 10 }, "\(missed)")
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
