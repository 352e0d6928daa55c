import Foundation
import Testing
import TestSupport

/// A recording into a FIFO whose reader leaves at any moment: before the run ends, while it finalizes, or after it
/// (reading to the end). A pipe that breaks closes that recording alone, at once and with its message; the run does
/// not wait for it, the recording beside it is finalized whole, and the run exits 0.
extension EndToEnd.RobustnessTests {
    /// The reader (`head`, after 100 KB) leaves while the run goes on. The write that follows fails with EPIPE: the
    /// process is not ended by SIGPIPE. The run is ended only once the failure was reported, so the pipe breaks while
    /// running.
    @Test func aRecordingIntoAPipeWhoseReaderLeavesFailsAlone() throws {
        let dir = try TempDir()
        let fifo = dir.file("pipe.ts"), other = dir.file("other.mkv")
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = try LiveProcess("/usr/bin/head", ["-c", "100000", fifo])
        let p = try LiveProcess(binary, ["run", "--no-control", "--size", "320x180", "--record", fifo,
                                         "--record", other])
        #expect(p.waitForLine(timeout: 60) { $0.contains("record:\(fifo): failed and closed") } != nil,
                "\(p.allOutput)")
        p.signal(SIGINT)
        try expectFailedAlone(p, fifo: fifo, other: other)
        #expect(reader.waitForExit() == 0)
    }

    /// The reader leaves before the run ends, before anything reached the pipe, so the pipe breaks at the recording's
    /// end of stream: what head did in 4 runs of 5 of a release build, where the run then exited 1 ("some outputs
    /// did not finish in time") without saying that the recording failed. One second at 320x180 is about 38 KB of
    /// MPEG-TS, less than filesink's 64 KB buffer, so its first write is the flush at the end of stream. The pipe
    /// holds one page, so that flush waits for the reader should the reader be slow to leave: it fails either way.
    @Test func aPipeWhoseReaderLeftBeforeTheEndBreaksAtTheEndOfStream() throws {
        let dir = try TempDir()
        let fifo = dir.file("pipe.ts"), other = dir.file("other.mkv")
        let (reader, p) = try holdingReader(fifo, other)
        #expect(p.waitForLine { $0.contains(" at 30 fps") } != nil, "\(p.allOutput)")
        reader.send("leave")
        #expect(reader.waitForExit() == 0, "\(reader.allOutput)")
        try expectFailedAlone(p, fifo: fifo, other: other)
    }

    /// The reader leaves while the run finalizes. As above nothing reached the pipe before the end of stream, and
    /// the flush waits for the reader, which leaves once the run says it is finalizing: the flush fails while
    /// pipcompose waits for that recording's end of stream.
    @Test func aPipeWhoseReaderLeavesDuringFinalizationFailsAtOnce() throws {
        let dir = try TempDir()
        let fifo = dir.file("pipe.ts"), other = dir.file("other.mkv")
        let (reader, p) = try holdingReader(fifo, other)
        #expect(p.waitForLine { $0.contains("finalizing outputs") } != nil, "\(p.allOutput)")
        reader.send("leave")
        #expect(reader.waitForExit() == 0, "\(reader.allOutput)")
        try expectFailedAlone(p, fifo: fifo, other: other)
        // It failed as it was being finalized, not before.
        let finalizing = p.stderr.firstIndex { $0.contains("finalizing outputs") }
        let failed = p.stderr.firstIndex { $0.contains("record:\(fifo): failed and closed") }
        #expect(finalizing.flatMap { f in failed.map { f < $0 } } == true, "\(p.allOutput)")
    }

    /// The reader reads until the writer closes the pipe, after the run's end: what came through the pipe is the
    /// whole recording, as a file would hold it, and nothing failed.
    @Test func aPipeReadToItsEndHoldsTheWholeRecording() throws {
        let dir = try TempDir()
        let fifo = dir.file("pipe.ts"), copy = dir.file("copy.ts"), other = dir.file("other.mkv")
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = try LiveProcess("/usr/bin/python3", [fixture("fifo_reader.py"), fifo, "--copy", copy])
        let p = try LiveProcess(binary, ["run", "--no-control", "--size", "320x180", "--duration", "2",
                                         "--record", fifo, "--record", other])
        #expect(p.waitForExit(timeout: 60) == 0, "\(p.allOutput)")
        #expect(reader.waitForExit() == 0, "\(reader.allOutput)")
        #expect(reader.stdout.contains { $0.hasPrefix("eof ") }, "\(reader.allOutput)")
        #expect(!p.allOutput.contains("failed"), "\(p.allOutput)")
        let frames = try #require(summaryFrames(p, "record:\(fifo)"), "\(p.allOutput)")
        #expect(frames > 0)
        #expect(try decodedFrames(copy) == frames)
        let decode = try tool(["ffmpeg", "-v", "error", "-i", copy, "-f", "null", "-"])
        #expect(decode.status == 0 && decode.err.isEmpty, "\(decode.err)")
        #expect(try decodedFrames(other) == summaryFrames(p, "record:\(other)"))
    }

    /// A reader that opened the FIFO and never reads (a stalled consumer, as a hung pipe to another program would
    /// be). Four seconds fill the pipe, so the recording's sink waits in a write that never returns, and its end of
    /// stream cannot come out: it is given its 10 s, then 2 s to stop, and is left behind. The run exits 1 naming
    /// it, at once after that; the recording beside it is finalized whole.
    @Test func aFIFONobodyReadsIsLeftBehindAndTheOtherFinalizes() throws {
        let dir = try TempDir()
        let fifo = dir.file("pipe.ts"), other = dir.file("other.mkv")
        let (reader, p) = try holdingReader(fifo, other, seconds: 4)
        defer { reader.send("leave") }
        #expect(p.waitForExit(timeout: 60) == 1, "\(p.allOutput)")
        let out = p.allOutput
        #expect(p.stderr.contains { $0.contains("record:\(fifo): stuck: its end did not come out") }, "\(out)")
        #expect(p.stderr.contains { $0.contains("record:\(fifo) did not finish in time") }, "\(out)")
        #expect(p.stdout.contains { $0.hasPrefix("record:\(fifo): stuck (left behind) after ") }, "\(out)")
        let frames = try #require(summaryFrames(p, "record:\(other)"), "\(out)")
        #expect(frames >= 100, "\(out)")
        #expect(try decodedFrames(other) == frames, "\(out)")
    }

    /// A reader that reads, then stops (SIGSTOP) while the run goes on: the recording into its pipe takes nothing
    /// for 10 s, drops meanwhile, and is failed as stuck while the recording beside it goes on; the run ends as
    /// usual (0: it failed alone and said so) and the reader, let go on, reads to the end of what was written.
    @Test func aPipeWhoseReaderStopsReadingFailsAloneAsStuck() throws {
        let dir = try TempDir()
        let fifo = dir.file("pipe.ts"), copy = dir.file("copy.ts"), other = dir.file("other.mkv")
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = try LiveProcess("/usr/bin/python3", [fixture("fifo_reader.py"), fifo, "--copy", copy])
        defer { kill(reader.process.processIdentifier, SIGCONT) }
        let p = try LiveProcess(binary, ["run", "--no-control", "--size", "320x180", "--status-every", "0.5",
                                         "--record", fifo, "--record", other])
        #expect(p.waitForFrames("record:\(fifo)", atLeast: 30), "\(p.allOutput)")
        kill(reader.process.processIdentifier, SIGSTOP)
        #expect(p.waitForLine(timeout: 60) { $0.contains("record:\(fifo): failed and closed: ") && $0.contains("stuck") }
                != nil, "\(p.allOutput)")
        let before = p.stdout.last { $0.contains(" record:\(other): ") }.flatMap(LiveProcess.frames(in:)) ?? 0
        #expect(p.waitForFrames("record:\(other)", atLeast: before + 30), "\(p.allOutput)")
        p.signal(SIGINT)
        try expectFailedAlone(p, fifo: fifo, other: other)
        kill(reader.process.processIdentifier, SIGCONT)
        #expect(reader.waitForExit() == 0, "\(reader.allOutput)")
        #expect(reader.stdout.contains { $0.hasPrefix("eof ") }, "\(reader.allOutput)")
    }

    /// A FIFO that nothing reads: the recording waits 10 s for a reader (its sink would wait in its open forever),
    /// then the run is refused with what to do, and nothing is left running.
    @Test func aFIFOWithoutAReaderIsRefusedAfterItsWait() throws {
        let dir = try TempDir()
        let fifo = dir.file("pipe.ts"), other = dir.file("other.mkv")
        #expect(mkfifo(fifo, 0o600) == 0)
        let p = try LiveProcess(binary, ["run", "--no-control", "--size", "320x180", "--duration", "1",
                                         "--record", other, "--record", fifo])
        #expect(p.waitForExit(timeout: 60) == 1, "\(p.allOutput)")
        #expect(p.stderr.contains { $0.contains("nothing reads the FIFO '\(fifo)' (waited 10 s): start its reader first") },
                "\(p.allOutput)")
    }

    /// A FIFO at `fifo` with a reader that holds it open, reads nothing, and leaves when told (a line "leave"), in a
    /// pipe of one page; and a run of `seconds` recording into it and into `other`. The reader has opened the FIFO.
    private func holdingReader(_ fifo: String, _ other: String,
                               seconds: Int = 1) throws -> (reader: LiveProcess, run: LiveProcess) {
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = try LiveProcess("/usr/bin/python3", [fixture("fifo_reader.py"), fifo, "--hold",
                                                          "--pipe-size", "4096"])
        let p = try LiveProcess(binary, ["run", "--no-control", "--size", "320x180", "--duration", String(seconds),
                                         "--record", fifo, "--record", other])
        #expect(reader.waitForLine { $0 == "open" } != nil, "\(reader.allOutput)")
        return (reader, p)
    }

    /// The run `p` exits 0 though the recording into `fifo` failed: it said so once, the summary says its counts end
    /// at the failure, the run did not report a wait for it, and the recording beside it (`other`) decodes whole.
    private func expectFailedAlone(_ p: LiveProcess, fifo: String, other: String) throws {
        #expect(p.waitForExit(timeout: 60) == 0, "\(p.allOutput)")
        let out = p.allOutput
        #expect(p.stderr.filter { $0.contains("record:\(fifo): failed and closed") }.count == 1, "\(out)")
        #expect(p.stdout.contains { $0.hasPrefix("record:\(fifo): failed after ") }, "\(out)")
        #expect(!out.contains("did not finish in time"), "\(out)")
        let frames = try #require(summaryFrames(p, "record:\(other)"), "\(out)")
        #expect(frames > 0)
        #expect(try decodedFrames(other) == frames, "\(out)")
    }
}
