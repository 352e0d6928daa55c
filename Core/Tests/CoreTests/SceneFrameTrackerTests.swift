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

    /// Compares every `every`-th frame (as a busy comparer does): the truth is among the candidates, and the first
    /// candidate after a match is the truth again unless the state changed in between.
    func follow(_ truth: [UInt64], every: [Int]) -> (found: Int, missed: Int) {
        var t = SceneFrameTracker()
        var n = 0, k = 0, found = 0, missed = 0
        while n < truth.count {
            let c = t.candidates(for: UInt64(n))
            if c.contains(truth[n]) {
                found += 1
                t.matched(frame: UInt64(n), scene: truth[n])
            } else {
                missed += 1
                t.missed()
            }
            n += every[k % every.count]; k += 1
        }
        return (found, missed)
    }

    @Test func withoutAPauseTheSceneIsTheFrame() {
        var t = SceneFrameTracker()
        #expect(t.candidates(for: 0) == [0])
        #expect(t.candidates(for: 90).first == 90)
        #expect(t.behind == 0)
    }

    @Test func pausesAreFollowedFrameByFrame() {
        let truth = Self.timeline(frames: 600, pauses: [(100, 60), (300, 1), (400, 90)])
        #expect(follow(truth, every: [1]) == (600, 0))
        var t = SceneFrameTracker()
        for n in 0..<600 { t.matched(frame: UInt64(n), scene: truth[n]) }
        #expect(t.behind == 151)
    }

    @Test func pausesAreFollowedAcrossSkippedFrames() {
        // A comparer busy for 1 to 5 frames at a time: a pause starting or ending between two compared frames is
        // among the moments between.
        let truth = Self.timeline(frames: 3000, pauses: [(100, 60), (333, 7), (1000, 600), (2001, 2)])
        #expect(follow(truth, every: [1, 3, 5, 2, 4]).missed == 0)
    }

    @Test func aPauseBetweenComparesFarApartIsFoundAgain() {
        // A comparer that falls 12 to 30 frames behind: a pause can begin and end out of sight of the moments
        // between, and the pictures after it miss until the sweep finds the scene frame again; it does, and from
        // then on every picture matches.
        let truth = Self.timeline(frames: 6000, pauses: [(100, 60), (1000, 37), (2500, 600), (4001, 13)])
        var t = SceneFrameTracker(maxBetween: 2, maxSweep: 20)
        var n = 0, k = 0, missedAfter: [Int] = [], longest = 0, run = 0
        let steps = [12, 30, 17, 25]
        while n < truth.count {
            if t.candidates(for: UInt64(n)).contains(truth[n]) {
                t.matched(frame: UInt64(n), scene: truth[n])
                run = 0
            } else {
                t.missed()
                missedAfter.append(n)
                run += 1
                longest = max(longest, run)
            }
            n += steps[k % steps.count]; k += 1
        }
        #expect(longest <= 4, "missed in a row: \(longest) (\(missedAfter))")
        #expect(t.last.map { truth[Int($0.frame)] == $0.scene } == true)
        #expect(missedAfter.allSatisfy { $0 > 100 })
    }

    @Test func theLikeliestComeFirst() {
        var t = SceneFrameTracker(maxBetween: 2, maxSweep: 4)
        t.matched(frame: 100, scene: 40)
        #expect(t.candidates(for: 105) == [45, 40, 44, 43])
        #expect(t.candidates(for: 101) == [41, 40])
        #expect(t.behind == 60)
        // An older frame (out of order) or the same one: the lag as it stands.
        #expect(t.candidates(for: 90) == [30])
        #expect(t.candidates(for: 100) == [40])
        // After a miss, the span is swept a part at a time from both ends, and around again.
        t.missed()
        #expect(t.candidates(for: 108) == [48, 40, 41, 42, 47, 46])
        #expect(t.candidates(for: 108) == [48, 40, 43, 44, 45])
        #expect(t.candidates(for: 108) == [48, 40, 45, 46, 43, 42])
        #expect(t.candidates(for: 108) == [48, 40, 47, 41])
        t.matched(frame: 108, scene: 44)
        #expect(t.candidates(for: 110) == [46, 44, 45])
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
