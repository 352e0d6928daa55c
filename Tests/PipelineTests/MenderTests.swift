import Foundation
import Testing
import TestSupport
@testable import Compositor

/// The menders (FragmentMend, MatroskaMend, TransportStreamMend) on recordings cut short and damaged: no frame known
/// to be written whole is lost, ffmpeg reads what is left without a word, and junk never crashes them. The recordings
/// are made here by GStreamer, through the muxers of pipcompose's own record templates (pipelines/record-*.pipeline),
/// as fast as they encode; `pipcompose mend` and the program's own recordings are EndToEndTests.FragmentMendTests.
@Suite(.serialized) struct MenderTests {
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
        try checkCuts("ts", TransportStreamMend.mend, size: PixelSize(width: 1280, height: 720),
                      wholeStaysWhole: false) { video, audio, data in
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

    /// Junk: a recording's bytes damaged at random places and cut at random lengths, and random bytes behind a
    /// real header. The menders may refuse or cut, but must not crash, and what they leave must start as it did.
    @Test(arguments: ["mp4", "mkv", "ts"]) func damagedFilesNeverCrashTheMenders(_ ext: String) throws {
        let dir = try TempDir()
        let (_, data) = try recordWithSound(dir, ext, size: PixelSize(width: 160, height: 90), seconds: 2)
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
    private func checkCuts(_ ext: String, _ mend: (String) -> FragmentMend.Outcome?,
                           size: PixelSize = PixelSize(width: 320, height: 180), wholeStaysWhole: Bool = true,
                           _ cuts: (_ video: [Packet], _ audio: [Packet], _ data: Data) throws -> [Cut]) throws {
        let dir = try TempDir()
        let (whole, data) = try recordWithSound(dir, ext, size: size, seconds: 3)
        let video = try probePackets(whole, stream: "v:0"), audio = try probePackets(whole, stream: "a:0")
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
            #expect(try probeDecodedFrames(path) == cut.video, "cut at \(cut.at): \(outcome)")
            #expect(try probePackets(path, stream: "a:0").count == cut.audio, "cut at \(cut.at): \(outcome)")
            let decode = try runTool(["ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"])
            #expect(decode.status == 0 && decode.stderr.isEmpty, "cut at \(cut.at): \(decode.stderr)")
            // Mended once, it is whole.
            if wholeStaysWhole { #expect(mend(path) == .whole, "cut at \(cut.at)") }
        }
    }

    /// A recording as `ext` in `dir`, made through the muxer of pipcompose's record template for it: a moving
    /// test picture encoded as the program's x264 settings encode `size` at 30 fps (a key frame a second), and a
    /// tone as AAC, both for `seconds`. Its path and bytes.
    private func recordWithSound(_ dir: TempDir, _ ext: String, size: PixelSize,
                                 seconds: Int) throws -> (String, Data) {
        let path = dir.file("whole.\(ext)")
        let settings = EncoderSettings(), bitrate = settings.bitrate(for: size, fps: 30)
        let picture = "videotestsrc num-buffers=\(seconds * 30) pattern=pinwheel"
            + " ! video/x-raw,width=\(size.width),height=\(size.height),framerate=30/1 ! videoconvert"
            + " ! x264enc tune=zerolatency speed-preset=\(settings.preset) bitrate=\(bitrate)"
            + " key-int-max=30 ! video/x-h264,stream-format=byte-stream,alignment=au,profile=constrained-baseline"
        let sound = "audiotestsrc num-buffers=\(seconds * 48_000 / 1024 + 1) samplesperbuffer=1024"
            + " ! audio/x-raw,rate=48000,channels=2 ! audioconvert ! avenc_aac bitrate=128000"
        let muxing = try PipelineTemplate.load("record-\(ext)")
            .render(["location": PipelineTemplate.quoted(path), "audio_parse": AudioCodec.aac.parser], audio: true)
        #expect(muxing.contains("appsrc name=in ") && muxing.contains("appsrc name=audio "), "\(muxing)")
        let launch = muxing.replacingOccurrences(of: "appsrc name=in ", with: picture + " ! queue ")
            .replacingOccurrences(of: "appsrc name=audio ", with: sound + " ! queue ")
        Gst.initialize()
        let pipeline = try Pipeline(name: "record-\(ext)", launch: launch)
        try pipeline.play()
        let end = pipeline.waitForEnd(timeout: 60)
        pipeline.stop(drain: false)
        guard case .eos = end else { throw PipelineEnded(launch: launch, end: "\(end)") }
        return (path, try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A recording's pipeline that ended on an error or not at all.
    struct PipelineEnded: Error, CustomStringConvertible {
        var launch: String
        var end: String
        var description: String { "\(launch): \(end)" }
    }
}
