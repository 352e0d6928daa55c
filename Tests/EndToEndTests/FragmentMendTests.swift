import Foundation
import Testing
import TestSupport
@testable import Compositor

extension EndToEnd {
    /// A recording (MP4, Matroska, MPEG-TS) that a full disk stops in the middle of a write is mended to end on its
    /// last whole frame, and `pipcompose mend` mends what was cut outside its hands: ffmpeg reads them without a word.
    /// The menders themselves, on recordings cut everywhere and on junk, are PipelineTests.MenderTests.
    @Suite(.serialized) struct FragmentMendTests {
        /// A file size limit fails a write part way, as a full disk does (dash's `ulimit -f` counts 512-byte
        /// blocks: 400 is 200 KB, about 2 s at 2 Mbit/s). SIGXFSZ is ignored, so the write fails with EFBIG instead
        /// of killing the process.
        @Test(arguments: ["mp4", "mkv", "ts"]) func aRecordingStoppedByAFullDiskEndsOnItsLastWholeFrame(_ format: String) throws {
            let dir = try TempDir()
            let out = dir.file("cut.\(format)")
            let p = try LiveProcess("/bin/sh", ["-c", "ulimit -f 400; trap '' XFSZ; exec \"$0\" \"$@\"", binary,
                                                "run", "--no-control", "--size", "640x360", "--bitrate", "2000",
                                                "--duration", "4", "--record", out])
            #expect(p.waitForExit(timeout: 60) == 0, "\(p.allOutput)")
            #expect(p.allOutput.contains("record:\(out): failed and closed"), "\(p.allOutput)")
            #expect(p.allOutput.contains("mended to end on its last whole frame"), "\(p.allOutput)")
            // The summary says the recording's counts end at its failure.
            #expect(p.allOutput.contains("\nrecord:\(out): failed after "), "\(p.allOutput)")
            let size = try #require(try FileManager.default.attributesOfItem(atPath: out)[.size] as? NSNumber).intValue
            #expect(size > 0 && size < 400 * 512)
            let decode = try tool(["ffmpeg", "-v", "error", "-i", out, "-f", "null", "-"])
            #expect(decode.status == 0 && decode.err.isEmpty, "\(decode.err)")
            // At least the first fragment (500 ms) and the frames of the cut one that were written whole.
            #expect(try decodedFrames(out) ?? 0 > 15)
        }

        /// `pipcompose mend`: files cut short outside pipcompose's hands are mended in place, told by their first
        /// bytes (a Matroska file named .mp4 too); a whole file is left as it is; a file that is not a recording, or
        /// is missing, gets an error naming it and the others are still mended.
        @Test func theMendCommandMendsCutRecordingsAndRefusesOthers() throws {
            let dir = try TempDir()
            let (mp4, mp4Data) = try recordWithSound(dir, "mp4", size: "320x180", seconds: 2)
            let (_, mkvData) = try recordWithSound(dir, "mkv", size: "320x180", seconds: 2)
            let cutMP4 = dir.file("cut.mp4"), cutMKV = dir.file("matroska-named.mp4"), text = dir.file("notes.mp4")
            try mp4Data.prefix(mp4Data.count * 3 / 5).write(to: URL(fileURLWithPath: cutMP4))
            try mkvData.prefix(mkvData.count * 3 / 5).write(to: URL(fileURLWithPath: cutMKV))
            try Data("not a recording\n".utf8).write(to: URL(fileURLWithPath: text))
            let missing = dir.file("missing.mkv")
            let r = try pipcompose(["mend", cutMP4, mp4, text, cutMKV, missing])
            #expect(r.status != 0)
            #expect(r.stdout.contains("\(cutMP4): MP4, mended to end on its last whole frame"), "\(r.stdout)")
            #expect(r.stdout.contains("\(mp4): MP4, whole; nothing changed"), "\(r.stdout)")
            #expect(r.stdout.contains("\(cutMKV): Matroska, mended"), "\(r.stdout)")
            #expect(r.stderr.contains("\(text): not an MP4, Matroska or MPEG-TS recording"), "\(r.stderr)")
            #expect(r.stderr.contains("\(missing): cannot open it"), "\(r.stderr)")
            #expect(r.stderr.contains("2 of 5 files could not be mended"), "\(r.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: text)) == Data("not a recording\n".utf8))
            #expect(try Data(contentsOf: URL(fileURLWithPath: mp4)) == mp4Data)
            for path in [cutMP4, cutMKV] {
                let decode = try tool(["ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"])
                #expect(decode.status == 0 && decode.err.isEmpty, "\(path): \(decode.err)")
                #expect(try decodedFrames(path) ?? 0 > 20, "\(path)")
            }
            let again = try pipcompose(["mend", cutMP4, cutMKV])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout.contains("\(cutMKV): Matroska, whole; nothing changed"), "\(again.stdout)")
        }

        /// A file cut right after a frame inside a fragment, as `kill -9` leaves one (filesink writes whole buffers),
        /// loses no byte to mending, but its last moof lists frames that were never written and its mdat claims their
        /// bytes: those fields are rewritten in place. `pipcompose mend` must report that change with the bytes it
        /// rewrote (which the file's own bytes, before and after, count), not call the file whole; a whole file is
        /// reported whole and left untouched, and so is the mended file when mended again.
        @Test func aMendThatOnlyRewritesHeaderFieldsSaysWhatItChanged() throws {
            let dir = try TempDir()
            let (whole, data) = try recordWithSound(dir, "mp4", size: "320x180", seconds: 3)
            let video = try probePackets(whole, stream: "v:0"), audio = try probePackets(whole, stream: "a:0")
            let starts = Set((video + audio).map(\.pos))
            // A frame past the first fragments that the next frame follows in the same mdat.
            let frame = try #require(video.dropFirst(video.count / 2).first { starts.contains($0.pos + $0.size) })
            let cut = dir.file("cut.mp4"), at = frame.pos + frame.size
            let before = data.prefix(at)
            try before.write(to: URL(fileURLWithPath: cut))
            let r = try pipcompose(["mend", cut, whole])
            #expect(r.status == 0, "\(r.stderr)")
            let after = try Data(contentsOf: URL(fileURLWithPath: cut))
            #expect(after.count == before.count)
            let rewritten = zip(before, after).filter { $0 != $1 }.count
            #expect(rewritten > 0)
            #expect(r.stdout.contains("\(cut): MP4, mended to end on its last whole frame: the last fragment keeps "),
                    "\(r.stdout)")
            #expect(r.stdout.contains(" dropped); \(rewritten) bytes rewritten in place, 0 bytes cut"), "\(r.stdout)")
            #expect(r.stdout.contains("\(whole): MP4, whole; nothing changed"), "\(r.stdout)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: whole)) == data)
            let decode = try tool(["ffmpeg", "-v", "error", "-i", cut, "-f", "null", "-"])
            #expect(decode.status == 0 && decode.err.isEmpty, "\(decode.err)")
            #expect(try decodedFrames(cut) == video.filter { $0.pos + $0.size <= at }.count)
            let again = try pipcompose(["mend", cut])
            #expect(again.stdout.contains("\(cut): MP4, whole; nothing changed"), "\(again.stdout)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: cut)) == after)
        }

        /// `pipcompose mend` refuses a file a running pipcompose is still recording (it would cut it under its
        /// writer), and mends it once the recording has ended; a file left by a killed process is not held.
        @Test func theMendCommandLeavesARecordingInProgressAlone() throws {
            let dir = try TempDir()
            let out = dir.file("live.mp4"), killed = dir.file("killed.mkv")
            let p = try LiveProcess(binary, ["run", "--no-control", "--size", "320x180", "--status-every", "0.2",
                                             "--record", out, "--record", killed])
            #expect(p.waitForFrames("record:\(out)", atLeast: 30), "\(p.allOutput)")
            let busy = try pipcompose(["mend", out])
            #expect(busy.status != 0)
            #expect(busy.stderr.contains("\(out): a running pipcompose is recording it"), "\(busy.stderr)")
            // Killed once the MP4 holds two fragments (the muxer writes one every 500 ms).
            func fragments() -> Int {
                (try? Data(contentsOf: URL(fileURLWithPath: out))).map { $0.ranges(of: Data("moof".utf8)).count } ?? 0
            }
            poll(until: { fragments() >= 2 }, timeout: 30, every: 0.05)
            p.signal(SIGKILL)
            _ = p.waitForExit(timeout: 30)
            let after = try pipcompose(["mend", out, killed])
            #expect(after.status == 0, "\(after.stderr)")
            #expect(after.stdout.contains("\(out): MP4,"), "\(after.stdout)")
            #expect(after.stdout.contains("\(killed): Matroska,"), "\(after.stdout)")
            for path in [out, killed] {
                let decode = try tool(["ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"])
                #expect(decode.status == 0 && decode.err.isEmpty, "\(path): \(decode.err)")
            }
        }

        /// A recording of the demo with a tone, as `ext` in `dir`: its path and bytes.
        private func recordWithSound(_ dir: TempDir, _ ext: String, size: String, seconds: Int) throws -> (String, Data) {
            let path = dir.file("whole.\(ext)")
            let r = try pipcompose(["run", "--no-control", "--size", size, "--duration", "\(seconds)", "--audio", "tone",
                                    "--record", path])
            #expect(r.status == 0, "\(r.stderr)")
            return (path, try Data(contentsOf: URL(fileURLWithPath: path)))
        }
    }
}
