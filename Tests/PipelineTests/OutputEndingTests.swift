import Foundation
import Testing
import TestSupport
@testable import Compositor

/// What `didStop` says of an output stopped while running: `finalized` only when its end came out.
@Suite(.serialized) struct OutputEndingTests {
    /// A recording into a FIFO whose reader reads it while it runs, then (told "hold") stops reading and fills the
    /// pipe itself, after which the recording is stopped (`ctl record stop`): its end's write waits on the full pipe,
    /// the reader then leaves, and the write fails. The recording failed as it ended: `outputFailed` comes, before
    /// `didStop`, which says it was not finalized (it said true before, as for every ending but a timeout). Nothing
    /// waits on the pipe until the hold, so the stop is the next thing the test does: however slowly this thread is
    /// run, the output cannot have been failed as stuck (10 s of a full queue) before it.
    @Test func aRecordingThatFailsAsItEndsIsNotFinalized() async throws {
        // The session runs in this process: a write into a pipe whose reader left must fail, not end the tests.
        signal(SIGPIPE, SIG_IGN)
        let dir = try TempDir()
        let fifo = dir.file("pipe.ts")
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = Process(), tell = Pipe(), said = Pipe()
        reader.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        reader.arguments = [examples + "/../Tests/Fixtures/fifo_reader.py", fifo, "--hold", "--drain", "--pipe-size", "4096"]
        reader.standardInput = tell
        reader.standardOutput = said
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
        try tell.fileHandleForWriting.write(contentsOf: Data("hold\n".utf8))
        #expect(line(from: said.fileHandleForReading) == "open")
        #expect(line(from: said.fileHandleForReading) == "holding")
        try session.stopOutput(id: id)
        try tell.fileHandleForWriting.write(contentsOf: Data("leave\n".utf8))
        var seen: [String] = [], finalized: String?
        for await e in events where e.details["output"] == id && ["outputFailed", "didStop"].contains(e.type) {
            seen.append(e.type)
            if e.type == "didStop" {
                finalized = e.details["finalized"]
                break
            }
        }
        #expect(seen == ["outputFailed", "didStop"], "its end's write met a pipe with no reader, and said so first")
        #expect(finalized == "false")
    }

    /// The next line `handle` gives, read a byte at a time (nothing past it is taken); nil when it ends first.
    private func line(from handle: FileHandle) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(handle.fileDescriptor, &byte, 1) == 1 {
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return nil
    }
}
