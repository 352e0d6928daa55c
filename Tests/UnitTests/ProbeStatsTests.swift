import Foundation
import Testing
@testable import Compositor

@Suite struct ProbeStatsTests {
    typealias R = TimecodeCodec.Reading

    /// Feeds frames `numbers` at 30 fps, each drawn `latency` ms before it is decoded.
    func feed(_ numbers: [UInt64?], latency: Double = 10, start: Double = 1_000_000, warmupMs: Double = 0) -> ProbeStats {
        var s = ProbeStats(warmupMs: warmupMs)
        for (i, n) in numbers.enumerated() {
            let arrival = start + Double(i) * 1000 / 30
            s.frame(arrivalMs: arrival, width: 640, height: 360,
                    reading: n.map { R(frame: $0, wallMilliseconds: UInt64(arrival - latency)) })
        }
        return s
    }

    @Test func gapsRepeatsAndUnreadableFramesAreCountedExactly() {
        // 0 1 2 [3 4 missing] 5 5 5 6 ? 7 [8 missing] 9
        let (t, _) = feed([0, 1, 2, 5, 5, 5, 6, nil, 7, 9]).finished()
        #expect(t.frames == 10 && t.readable == 9 && t.unreadable == 1)
        #expect(t.dropped == 3)
        #expect(t.repeated == 2 && t.freezes == 1 && t.longestFreezeFrames == 2)
        #expect(t.backwards == 0)
        #expect(t.firstFrame == 0 && t.lastFrame == 9)
    }

    @Test func aSourceThatRestartsIsBackwardsNotAHugeDrop() {
        let (t, _) = feed([100, 101, 102, 0, 1, 2]).finished()
        #expect(t.backwards == 1 && t.dropped == 0)
    }

    @Test func latencyIsDecodeTimeMinusTheStripTimeAndRepeatsAreLeftOut() {
        let (t, _) = feed([0, 1, 1, 2, 3], latency: 42).finished()
        let l = try! #require(t.latencyMs)
        // The strip holds whole milliseconds, rounded down: latency within 1 ms of 42.
        #expect(l.samples == 4)
        #expect(l.p50 >= 42 && l.p50 <= 43.05, "\(l)")
        #expect(l.max <= 43.05)
    }

    @Test func perSecondFiguresAddUpToTheTotals() {
        let numbers = (0..<95).map { UInt64($0) }.filter { $0 % 10 != 9 }   // 86 frames, 9 missing
        let s = feed(numbers.map { Optional($0) })
        let (t, seconds) = s.finished()
        #expect(t.dropped == 9)
        #expect(seconds.map(\.frames).reduce(0, +) == t.frames)
        #expect(seconds.map(\.dropped).reduce(0, +) == t.dropped)
        #expect(seconds.count == 3)
        #expect(seconds[0].frames == 30 && seconds[1].frames == 30)
    }

    @Test func theWarmupIsLeftOutOfThePercentilesButNotOfTheCounts() {
        var s = ProbeStats(warmupMs: 1000)
        // First second: a burst of late frames; after it, 5 ms.
        for i in 0..<60 {
            let arrival = 1_000_000 + Double(i) * 1000 / 30
            let latency = i < 30 ? 300.0 : 5.0
            s.frame(arrivalMs: arrival, width: 64, height: 64, reading: R(frame: UInt64(i), wallMilliseconds: UInt64(arrival - latency)))
        }
        let (t, _) = s.finished()
        #expect(t.frames == 60)
        #expect(t.firstFrameLatencyMs == 300)
        #expect(t.latencyMs?.max ?? 0 < 7, "\(String(describing: t.latencyMs))")
    }

    @Test func aStalledStreamShowsSecondsWithNoFrames() {
        var s = feed([0, 1, 2])
        s.roll(to: 1_000_000 + 3500)
        let (_, seconds) = s.finished()
        #expect(seconds.map(\.frames) == [3, 0, 0, 0])
    }

    @Test func aRecordingHasNoLatency() {
        var s = ProbeStats(measuresLatency: false)
        s.frame(arrivalMs: 5, width: 64, height: 64, reading: R(frame: 0, wallMilliseconds: 1))
        #expect(s.finished().total.latencyMs == nil)
        let report = ProbeReport(url: "x.ts", transport: nil, live: false, total: s.finished().total, seconds: [])
        #expect(ProbeReport.failures(report.total, live: false, maxLatencyMs: 100, maxDrops: nil).count == 1)
    }

    @Test func histogramPercentilesAreWithinATenthOfAMillisecond() {
        var h = LatencyHistogram()
        for i in 1...1000 { h.add(Double(i) / 10) }   // 0.1 … 100.0 ms
        #expect(abs(h.percentile(0.5)! - 50) <= 0.1)
        #expect(abs(h.percentile(0.99)! - 99) <= 0.1)
        #expect(h.percentile(1) == 100)
        #expect(h.summary?.samples == 1000)
        #expect(h.summary?.min == 0.1 && LatencySummary.of([3, 1, 2])?.min == 1)
        h.add(-5000)    // clocks that disagree: kept as they are
        #expect(h.minimum == -5000)
        #expect(abs(h.percentile(0.0005)! + 5000) <= 0.05)
    }

    @Test func dropPatternsParseAndCount() throws {
        let every = try DropPattern.parse("every:10")
        #expect((0..<30).filter { every.drops(Int64($0)) } == [9, 19, 29])
        #expect(every.dropped(between: 5, and: 30) == 3)   // 9, 19, 29
        #expect(every.dropped(between: 9, and: 19) == 0)
        let burst = try DropPattern.parse("burst:3/20")
        #expect((0..<40).filter { burst.drops(Int64($0)) } == [17, 18, 19, 37, 38, 39])
        for bad in ["every:1", "every:x", "burst:5/5", "burst:0/10", "sometimes", "burst:3"] {
            #expect(throws: DropPattern.Invalid.self) { try DropPattern.parse(bad) }
        }
    }
}

@Suite struct SoakReportTests {
    @Test func memoryGrowthComparesTheLastWindowWithTheFirstAfterWarmUp() {
        // 100 s: a start-up climb in the first 10 s, then flat at 100 MiB, then +2 MiB for the last 10 s.
        let mib: UInt64 = 1_048_576
        var rss = (0..<10).map { UInt64($0) * 10 * mib }
        rss += [UInt64](repeating: 100 * mib, count: 80)
        rss += [UInt64](repeating: 102 * mib, count: 10)
        #expect(SoakReport.rssGrowth(rss) == Int64(2 * mib))
        #expect(SoakReport.rssGrowth([1, 2]) == 0)
    }

    @Test func aChartLeavesGapsWhereValuesAreMissing() {
        let svg = SoakPlot.chart("t", [1, 2, 3, 4, 5], [.init(name: "a", color: "#000", values: [1, 2, nil, 4, 5])])
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 2)
        #expect(SoakPlot.escape("<a & \"b\">") == "&lt;a &amp; &quot;b&quot;&gt;")
    }
}

@Suite struct FidelityStatsTests {
    func frame(_ ssim: Double, region: Double? = nil, psnr: Double = 40) -> Similarity {
        Similarity(psnr: psnr, ssim: ssim, worstRegion: [0, 0, 10, 10], worstRegionSSIM: region ?? ssim)
    }

    @Test func aFrameIsCorruptWhenItsWorstRegionIsAndTheWorstComeFirst() {
        var f = FidelityStats(corruptBelow: 0.9, keepWorst: 2)
        f.record(second: 0, frame: 1, frame(0.99))
        // Whole picture fine on average, one region wrong: corrupt.
        f.record(second: 0, frame: 2, frame(0.97, region: 0.6, psnr: 25))
        f.record(second: 1, frame: 3, frame(0.95, region: 0.85))
        f.record(second: 1, frame: 4, frame(0.98))
        f.skipped()
        #expect(f.total.compared == 4 && f.total.skipped == 1 && f.total.corrupt == 2)
        #expect(f.total.worst.map(\.frame) == [2, 3])
        #expect(abs(f.total.ssimMean - 0.9725) < 1e-9 && f.total.ssimMin == 0.95 && f.total.psnrMin == 25)
        #expect(f.seconds.map(\.second) == [0, 1] && f.seconds.map(\.corrupt) == [1, 1])
        #expect(abs(f.seconds[1].ssimMean - 0.965) < 1e-9)
        #expect(abs((f.total.ssimP50 ?? 0) - 0.97) < 0.0002 && abs((f.total.ssimP1 ?? 0) - 0.95) < 0.0002)
    }
}
