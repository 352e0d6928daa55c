import Foundation
import Testing
import TestSupport
@testable import Compositor

/// The frame loop held up for a moment (a command that keeps its thread, as a busy machine or an encoder that is
/// behind would) catches up the frames it missed, and a recording keeps every one; held up past `catchUpLimit`,
/// it skips and counts them as late. Every frame's timecode strip carries the wall time it was due at, drawn late or
/// not, so a probe's latency for a caught-up frame counts the hiccup. The hold is measured on the loop's own clock,
/// not slept.
@Suite(.serialized) struct FrameLoopStallTests {
    /// Runs the info panel at 320x180 into a recording, holds the loop `seconds` at frame 30 or so, lets it draw 60
    /// more, and gives its counts, the recording's frame times and its pictures' strips (one per frame number).
    func run(holding seconds: Double) throws -> (stats: FrameLoop.Stats, times: [Double], strips: [TimecodeCodec.Reading]) {
        let dir = try TempDir()
        let file = dir.file("held.mkv")
        let scene = try SceneLoader.load(path: examples + "/info-panel.yaml")
        let options = LiveOptions(scene: scene, size: PixelSize(width: 320, height: 180), fps: 30,
                                  outputs: [try OutputSpec.record(file, policy: .fit)])
        let live = LiveSession(options: options, log: { _ in })
        try live.start()
        let loop = try #require(live.loop)
        try poll("30 frames drawn", until: { loop.stats.frame >= 30 }, timeout: 30)
        let held = DispatchSemaphore(value: 0)
        loop.perform { _, _ in
            let until = loop.clock.runningTime + UInt64(seconds * 1e9)
            while loop.clock.runningTime < until { usleep(1000) }
            held.signal()
        }
        #expect(held.wait(timeout: .now() + 30) == .success, "the loop took the hold")
        let after = loop.stats.frame
        try poll("60 frames after the hold", until: { loop.stats.frame >= after + 60 }, timeout: 30)
        #expect(live.stop())
        let stats = loop.stats
        let r = try runProgram("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                    "packet=pts_time", "-of", "csv=p=0", file])
        let times = r.stdout.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        let gray = dir.file("held.gray")
        let d = try runProgram("/usr/bin/ffmpeg", ["-v", "error", "-i", file, "-fps_mode", "passthrough", "-f", "rawvideo",
                                                   "-pix_fmt", "gray", gray])
        #expect(d.status == 0, "\(d.stderr)")
        let pictures = try Data(contentsOf: URL(fileURLWithPath: gray)), plane = 320 * 180
        var strips: [UInt64: TimecodeCodec.Reading] = [:]
        for at in stride(from: 0, to: pictures.count - plane + 1, by: plane) {
            let read = pictures[at..<(at + plane)].withUnsafeBytes {
                TimecodeCodec.read(luma: $0, width: 320, height: 180, stride: 320)
            }
            if let read { strips[read.frame] = read }
        }
        return (stats, times.sorted(), strips.values.sorted { $0.frame < $1.frame })
    }

    /// From one frame to the next, the strips' wall times move as the frame numbers do (a frame interval each, within
    /// a third of one), through the hold too.
    func expectWallTimesFollowFrameNumbers(_ strips: [TimecodeCodec.Reading], recorded: Int) {
        #expect(recorded >= 40 && strips.count >= recorded * 9 / 10,
                "the strips of the recording's \(recorded) pictures read: \(strips.count)")
        let off = zip(strips, strips.dropFirst()).map { a, b in
            (a.frame, Double(b.wallMilliseconds) - Double(a.wallMilliseconds) - Double(b.frame - a.frame) * 1000 / 30)
        }
        let worst = off.max { abs($0.1) < abs($1.1) }
        let (at, ms) = worst ?? (0, 0)
        #expect(abs(ms) < 1000.0 / 90, "after frame \(at) the wall time moved \(ms) ms more than the frame numbers did")
    }

    @Test func aLoopHeldAThirdOfASecondCatchesUpAndTheRecordingKeepsEveryFrame() throws {
        let (stats, times, strips) = try run(holding: 0.3)
        #expect(stats.late == 0, "held 9 frames' time: caught up, not skipped")
        #expect(stats.rendered + stats.repeated == UInt64(stats.frame + 1), "every frame number drawn once")
        #expect(times.count >= 90, "the recording holds the frames before, during and after the hold: \(times.count)")
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        #expect((gaps.max() ?? 1) < 1.5 / 30, "no frame missing in the recording: largest gap \(gaps.max() ?? 0) s")
        expectWallTimesFollowFrameNumbers(strips, recorded: times.count)
    }

    @Test func aLoopHeldPastTheLimitSkipsAndCountsTheFramesAsLate() throws {
        let (stats, times, strips) = try run(holding: FrameLoop.catchUpLimit + 0.5)
        #expect(stats.late >= 30, "held past \(FrameLoop.catchUpLimit) s: skipped, counted late (\(stats.late))")
        #expect(stats.rendered + stats.repeated + stats.late == UInt64(stats.frame + 1))
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        #expect((gaps.max() ?? 0) > 1, "the recording has the hole where the frames were skipped")
        expectWallTimesFollowFrameNumbers(strips, recorded: times.count)
    }
}
