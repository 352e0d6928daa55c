import Foundation
import Testing
import TestSupport
@testable import Compositor

extension EndToEnd {
    /// A recording (MP4, Matroska, MPEG-TS) that a full disk stops in the middle of a write is mended to end on its
    /// last whole frame: ffmpeg reads it without a word, and no frame known to be written whole is lost.
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

        /// A recording with sound (two tracks a fragment) cut at many places: inside a frame, right after one,
        /// inside an mdat's header and inside a moof. Which frames lie whole before the cut is read from the whole
        /// file (ffprobe's packet positions), apart from the mending.
        @Test func aFragmentCutAnywhereKeepsEveryFrameWrittenWhole() throws {
            try checkCuts("mp4", FragmentMend.mend) { video, audio, _ in
                var cuts: [Cut] = []
                for p in [video[37], video[52], video[68], audio[60], audio[101]] {
                    for at in [p.pos + p.size / 2, p.pos + p.size, p.pos - 4, p.pos - 100] {
                        cuts.append(Cut(at: at, video: video.filter { $0.pos + $0.size <= at }.count,
                                        audio: audio.filter { $0.pos + $0.size <= at }.count))
                    }
                }
                return cuts
            }
        }

        /// The same for Matroska: a recording with sound cut inside frames of both tracks. ffprobe gives where each
        /// frame's block lies, so a cut inside a frame keeps exactly the frames that lie before it.
        @Test func aMatroskaClusterCutInsideAFrameKeepsEveryFrameBeforeIt() throws {
            try checkCuts("mkv", MatroskaMend.mend) { video, audio, _ in
                var cuts: [Cut] = []
                for p in [video[20], video[37], video[52], video[89], audio[60], audio[101]] {
                    for at in [p.pos + p.size / 2, p.pos + 1] {
                        cuts.append(Cut(at: at, video: video.filter { $0.pos < p.pos }.count,
                                        audio: audio.filter { $0.pos < p.pos }.count))
                    }
                }
                return cuts
            }
        }

        /// MPEG-TS, recorded at 1280x720 so that key frames are over 64 KB and their PES packets give no length:
        /// cut inside frames of both tracks, right after a frame's first packet, and after such a key frame. A frame
        /// must stay when its last packet lies whole before the cut and, if its PES gives no length, the next frame
        /// of its stream starts there too; the frames after the first that may not stay are cut. Each frame's packets
        /// are read from the whole file.
        @Test func aTransportStreamCutAnywhereKeepsEveryFrameKnownWhole() throws {
            try checkCuts("ts", TransportStreamMend.mend, size: "1280x720", wholeStaysWhole: false) { video, audio, data in
                let ts = TransportStream(data)
                let big = video.indices.filter { video[$0].size > 65_600 && $0 + 1 < video.count }
                try #require(!big.isEmpty && big.allSatisfy { ts.givesNoLength(at: video[$0].pos) })
                var places: [Int] = []
                for p in [video[20], video[37], video[52], video[68], audio[60], audio[101]] {
                    places += [p.pos + 94, p.pos + 188, p.pos + 188 + p.size / 2, p.pos - 1, p.pos - 200]
                }
                for k in big { places += [video[k + 1].pos + 94, video[k + 1].pos + 282, video[k].pos + 5000] }
                return places.map { at in
                    let kept = ts.framesKept(cutAt: at, starts: (video + audio).map(\.pos))
                    return Cut(at: at, video: video.filter { kept.contains($0.pos) }.count,
                               audio: audio.filter { kept.contains($0.pos) }.count)
                }
            }
        }

        /// The packets of a transport stream, for the oracle above: each packet's PID and whether it starts a unit.
        struct TransportStream {
            let data: Data
            let pids: [Int]
            let unitStarts: [Bool]

            init(_ data: Data) {
                self.data = data
                let n = data.count / 188
                pids = (0..<n).map { Int(data[$0 * 188 + 1] & 0x1F) << 8 | Int(data[$0 * 188 + 2]) }
                unitStarts = (0..<n).map { data[$0 * 188 + 1] & 0x40 != 0 }
            }

            /// Whether the PES packet starting in the packet at `pos` gives its length as 0.
            func givesNoLength(at pos: Int) -> Bool {
                let header = data[pos + 3] & 0x20 != 0 ? 5 + Int(data[pos + 4]) : 4
                return data[pos + header + 4] == 0 && data[pos + header + 5] == 0
            }

            /// The frames (by the position of their first packet, from `starts`) that stay when the file is cut at
            /// `at`: those before the first frame not known whole there.
            func framesKept(cutAt at: Int, starts: [Int]) -> Set<Int> {
                let whole = at / 188
                var kept = Set<Int>()
                for pos in starts.sorted() {
                    let first = pos / 188, pid = pids[first]
                    let next = (first + 1..<pids.count).first { pids[$0] == pid && unitStarts[$0] }
                    let last = (first..<(next ?? pids.count)).last { pids[$0] == pid }!
                    let known = givesNoLength(at: pos) ? next.map { $0 < whole } ?? false : true
                    guard last < whole, known else { break }
                    kept.insert(pos)
                }
                return kept
            }
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
            let video = try packets(whole, "v:0"), audio = try packets(whole, "a:0")
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

        /// Junk: a recording's bytes damaged at random places and cut at random lengths, and random bytes behind a
        /// real header. The menders may refuse or cut, but must not crash, and what they leave must start as it did.
        @Test(arguments: ["mp4", "mkv", "ts"]) func damagedFilesNeverCrashTheMenders(_ ext: String) throws {
            let dir = try TempDir()
            let (_, data) = try recordWithSound(dir, ext, size: "160x90", seconds: 2)
            let mend: (String) -> FragmentMend.Outcome? = switch ext {
            case "mp4": FragmentMend.mend
            case "mkv": MatroskaMend.mend
            default: TransportStreamMend.mend
            }
            let path = dir.file("junk.\(ext)")
            for round in 0..<300 {
                var junk: Data
                if round % 3 == 0 {
                    let noise: [UInt8] = (0..<Int.random(in: 0...4096)).map { _ in UInt8.random(in: 0...255) }
                    junk = data.prefix(64) + Data(noise)
                } else {
                    junk = data.prefix(Int.random(in: 0...data.count))
                }
                let damages = junk.isEmpty ? 0 : Int.random(in: 0...8)
                for _ in 0..<damages {
                    junk[Int.random(in: 0..<junk.count)] = UInt8.random(in: 0...255)
                }
                try junk.write(to: URL(fileURLWithPath: path))
                if let outcome = mend(path) {
                    let left = try Data(contentsOf: URL(fileURLWithPath: path))
                    #expect(left.count + Int(outcome.bytesCut) == junk.count, "round \(round)")
                    #expect(left.prefix(8) == junk.prefix(min(8, left.count)), "round \(round)")
                }
            }
        }

        typealias Packet = (pos: Int, size: Int)
        /// Where to cut, and how many video and audio frames must stay.
        struct Cut {
            var at: Int
            var video: Int
            var audio: Int
        }

        /// Records 3 s with sound as `ext`, and cuts copies of it at the places `cuts` picks from the packets of both
        /// tracks, each with how many video and audio frames must stay. Each copy, mended, must decode without a word
        /// to those frames, and (`wholeStaysWhole`, not for MPEG-TS) be whole for a second mending.
        private func checkCuts(_ ext: String, _ mend: (String) -> FragmentMend.Outcome?, size: String = "320x180",
                               wholeStaysWhole: Bool = true,
                               _ cuts: (_ video: [Packet], _ audio: [Packet], _ data: Data) throws -> [Cut]) throws {
            let dir = try TempDir()
            let (whole, data) = try recordWithSound(dir, ext, size: size, seconds: 3)
            let video = try packets(whole, "v:0"), audio = try packets(whole, "a:0")
            try #require(video.count == 90 && audio.count > 100, "\(video.count) video, \(audio.count) audio packets")
            if wholeStaysWhole { #expect(mend(whole) == .whole) }
            for cut in try cuts(video, audio, data) {
                let path = dir.file("cut-\(cut.at).\(ext)")
                let before = data.prefix(cut.at)
                try before.write(to: URL(fileURLWithPath: path))
                let outcome = try #require(mend(path), "cut at \(cut.at)")
                // The outcome says what changed: the bytes cut, and the bytes that differ in what is left.
                let after = try Data(contentsOf: URL(fileURLWithPath: path))
                #expect(UInt64(before.count - after.count) == outcome.bytesCut, "cut at \(cut.at): \(outcome)")
                #expect(zip(before, after).filter { $0 != $1 }.count == outcome.bytesRewritten,
                        "cut at \(cut.at): \(outcome)")
                #expect(outcome.changed == (after != before), "cut at \(cut.at): \(outcome)")
                #expect(try decodedFrames(path) == cut.video, "cut at \(cut.at): \(outcome)")
                #expect(try packets(path, "a:0").count == cut.audio, "cut at \(cut.at): \(outcome)")
                let decode = try tool(["ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"])
                #expect(decode.status == 0 && decode.err.isEmpty, "cut at \(cut.at): \(decode.err)")
                // Mended once, it is whole.
                if wholeStaysWhole { #expect(mend(path) == .whole, "cut at \(cut.at)") }
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

        /// Where each packet of `stream` lies in the file, in file order.
        private func packets(_ path: String, _ stream: String) throws -> [Packet] {
            let r = try tool(["ffprobe", "-v", "error", "-select_streams", stream, "-show_entries", "packet=pos,size",
                              "-of", "csv=p=0", path])
            return r.out.split(separator: "\n").compactMap { line -> Packet? in
                let f = line.split(separator: ",")
                guard f.count == 2, let size = Int(f[0]), let pos = Int(f[1]) else { return nil }
                return (pos, size)
            }.sorted { $0.pos < $1.pos }
        }
    }
}
