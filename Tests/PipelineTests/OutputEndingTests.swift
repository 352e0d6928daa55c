import Foundation
import Testing
import TestSupport
@testable import Compositor

/// What `didStop` says of an output stopped while running: `finalized` only when its end came out.
@Suite(.serialized) struct OutputEndingTests {
    /// A recording whose end cannot be written (its device is full: filesink's first write, the flush of its
    /// 64 KB buffer at the end of stream, is refused), stopped after its first frames (`ctl record stop`): it failed as it
    /// ended, and `didStop` says it was not finalized. It said true before, as for every ending but a timeout.
    @Test func aRecordingThatFailsAsItEndsIsNotFinalized() async throws {
        let dir = try TempDir()
        let full = dir.file("full.ts")
        try FileManager.default.createSymbolicLink(atPath: full, withDestinationPath: "/dev/full")
        let scene = try SceneLoader.load(path: examples + "/info-panel.yaml")
        let options = LiveOptions(scene: scene, size: PixelSize(width: 320, height: 180), fps: 30,
                                  outputs: [try OutputSpec.record(dir.file("base.ts"), policy: .fit)])
        let session = LiveSession(options: options, log: { _ in })
        try session.start()
        defer { session.stop() }
        let events = session.events.subscribe()
        let id = try session.startOutput(try OutputSpec.record(full, policy: .fit))
        // A few frames taken (well under 64 KB at this size), so its end has something to write.
        #expect(try await pollAsync(until: {
            session.status.outputs.first { $0.id == id }.map { $0.delivered >= 10 } ?? false
        }, timeout: 20, every: 0.02))
        try session.stopOutput(id: id)
        var failed = false, finalized: String?
        for await e in events where e.details["output"] == id {
            if e.type == "outputFailed" { failed = true }
            if e.type == "didStop" {
                finalized = e.details["finalized"]
                break
            }
        }
        #expect(failed, "its end's write was refused")
        #expect(finalized == "false")
    }
}
