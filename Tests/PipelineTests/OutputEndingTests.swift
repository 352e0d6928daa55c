import Foundation
import Testing
import TestSupport
@testable import Compositor

/// What `didStop` says of an output stopped while running: `finalized` only when its end came out.
@Suite(.serialized) struct OutputEndingTests {
    /// A recording into a FIFO whose reader holds it open in a pipe of one page and reads nothing, stopped
    /// (`ctl record stop`) after a second of frames (under filesink's 64 KB buffer, so its end of stream is its first
    /// write): that write waits on the full pipe, the reader then leaves, and the write fails. The recording failed
    /// as it ended, and `didStop` says it was not finalized; it said true before, as for every ending but a timeout.
    @Test func aRecordingThatFailsAsItEndsIsNotFinalized() async throws {
        // The session runs in this process: a write into a pipe whose reader left must fail, not end the tests.
        signal(SIGPIPE, SIG_IGN)
        let dir = try TempDir()
        let fifo = dir.file("pipe.ts")
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = Process(), tell = Pipe()
        reader.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        reader.arguments = [examples + "/../Tests/Fixtures/fifo_reader.py", fifo, "--hold", "--pipe-size", "4096"]
        reader.standardInput = tell
        reader.standardOutput = FileHandle.nullDevice
        try reader.run()
        defer {
            try? tell.fileHandleForWriting.close()
            reader.waitUntilExit()
        }
        let scene = try SceneLoader.load(path: examples + "/info-panel.yaml")
        let options = LiveOptions(scene: scene, size: PixelSize(width: 320, height: 180), fps: 30,
                                  outputs: [try OutputSpec.record(dir.file("base.ts"), policy: .fit)])
        let session = LiveSession(options: options, log: { _ in })
        try session.start()
        defer { session.stop() }
        let events = session.events.subscribe()
        // It waits for the reader to have the FIFO open.
        let id = try session.startOutput(try OutputSpec.record(fifo, policy: .fit))
        #expect(try await pollAsync(until: {
            session.status.outputs.first { $0.id == id }.map { $0.delivered >= 30 } ?? false
        }, timeout: 30, every: 0.02))
        try session.stopOutput(id: id)
        try tell.fileHandleForWriting.write(contentsOf: Data("leave\n".utf8))
        var failed = false, finalized: String?
        for await e in events where e.details["output"] == id {
            if e.type == "outputFailed" { failed = true }
            if e.type == "didStop" {
                finalized = e.details["finalized"]
                break
            }
        }
        #expect(failed, "its end's write met a pipe with no reader")
        #expect(finalized == "false")
    }
}
