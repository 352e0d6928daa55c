import Foundation
import Testing
import TestSupport
@testable import Compositor

/// A resize that needs a fixed-size encoder (a `fit` recording letterboxed into the size it started with) has it
/// made when the resize is asked for, off the frame loop: the frame that applies the resize takes it.
@Suite(.serialized) struct ResizeEncodersTests {
    let start = PixelSize(width: 320, height: 180)

    func session(recording file: String) throws -> LiveSession {
        let scene = try SceneLoader.load(path: examples + "/info-panel.yaml")
        let options = LiveOptions(scene: scene, size: start, fps: 30, outputs: [try OutputSpec.record(file, policy: .fit)])
        return LiveSession(options: options, log: { _ in })
    }

    @Test func theFrameThatAppliesAResizeTakesTheEncoderMadeWhenItWasAskedFor() throws {
        let dir = try TempDir()
        let file = dir.file("fit.mp4")
        let live = try session(recording: file)
        try live.start()
        try poll("10 frames drawn", until: { live.status.frame >= 10 }, timeout: 30)
        let small = PixelSize(width: 160, height: 90)
        live.prepareResize(to: small)
        try poll("the letterboxing encoder made ahead", until: { live.resizes.ready.count == 1 }, timeout: 30)
        let made = try #require(live.resizes.ready.first)
        #expect(made.fixedSize == start)
        live.requestResize(small)
        try poll("the resize applied", until: { live.status.size == small && live.status.frame >= 40 }, timeout: 30)
        #expect(live.running.value?.fixed[start] === made, "the frame took the encoder made ahead")
        #expect(live.resizes.ready.isEmpty)
        #expect(live.stop())
        let r = try runProgram("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-show_entries",
                                                    "stream=width,height,nb_read_frames", "-of", "csv=p=0", file])
        let fields = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").map(String.init)
        #expect(fields.prefix(2) == ["320", "180"], "the recording keeps its size: \(r.stdout) \(r.stderr)")
        #expect((fields.last.flatMap { Int($0) } ?? 0) >= 40, "\(r.stdout)")
    }

    @Test func anEncoderMadeForAResizeThatDidNotComeIsEnded() throws {
        let dir = try TempDir()
        let live = try session(recording: dir.file("fit.mp4"))
        try live.start()
        try poll("10 frames drawn", until: { live.status.frame >= 10 }, timeout: 30)
        live.prepareResize(to: PixelSize(width: 160, height: 90))
        try poll("the encoder made ahead", until: { live.resizes.ready.count == 1 }, timeout: 30)
        let other = PixelSize(width: 240, height: 136)
        live.requestResize(other)
        try poll("the other resize applied", until: { live.status.size == other }, timeout: 30)
        #expect(live.resizes.ready.isEmpty, "the encoder made for 160x90 is ended, not kept")
        #expect(live.running.value?.fixed[start] != nil)
        #expect(live.stop())
    }
}
