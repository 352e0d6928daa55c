import Foundation
import Testing
import TestSupport

/// The MD5 of every decoded video frame of a file, in order (ffmpeg's framemd5): what a viewer's decoder shows.
func frameHashes(_ path: String) throws -> [String] {
    let r = try tool(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-f", "framemd5", "-"])
    #expect(r.status == 0, "\(r.err)")
    return r.out.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: ",").last.map {
        $0.trimmingCharacters(in: .whitespaces) } }
}

extension EndToEnd {
    /// `pipcompose render` (issue 51): a scene drawn at its own scene time as fast as the machine allows.
    @Suite(.serialized) struct RenderTests {
        /// Four seconds of the timecode scene with ticks, to an MP4 and an MKV at once: each file has every frame
        /// (ffmpeg decodes 120), the strip reads 0…119 in order with none dropped or repeated, every picture is the
        /// one the scene draws for its frame (probe --reference: nothing corrupt), and the ticks sit on the picture's
        /// seconds (A/V offset within a millisecond), the sound as long as the picture.
        @Test func everyFrameIsDrawnAtItsSceneTimeWithTheSoundOnIt() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let mp4 = dir.file("clip.mp4"), mkv = dir.file("clip.mkv")
            let r = try tool([binary, "render", scene, "--duration", "4", "--audio", "ticks", "-o", mp4, "-o", mkv])
            #expect(r.status == 0 && r.out.contains("120 frames"), "\(r.out)\(r.err)")
            for file in [mp4, mkv] {
                let decoded = try frameHashes(file).count
                #expect(decoded == 120, "\(file)")
                let (av, total, out) = try probeAV([file, "--reference", scene])
                #expect(total?["frames"] as? Int == 120 && total?["firstFrame"] as? Int == 0
                        && total?["lastFrame"] as? Int == 119 && total?["dropped"] as? Int == 0
                        && total?["repeated"] as? Int == 0 && total?["unreadable"] as? Int == 0, "\(out)")
                let report = (try? JSONSerialization.jsonObject(with: Data(out.utf8))) as? [String: Any]
                let fidelity = (report?["fidelity"] as? [String: Any])?["total"] as? [String: Any]
                #expect(fidelity?["compared"] as? Int == 120 && fidelity?["corrupt"] as? Int == 0, "\(out)")
                try expectAVOffset(try #require(av, "\(out)"), 0, file, atLeast: 3)
                let sound = try tool(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
                                      "stream=codec_name,duration", "-of", "csv=p=0", file])
                #expect(sound.out.hasPrefix("aac"), "\(sound.out)")
            }
        }

        /// Same input, same output: two renders of a scene with a clock, a ticker and the strip decode to the same
        /// pictures frame for frame, and a clock shows the scene time (2000-01-01 00:00:00 UTC at frame 0) unless
        /// `--wall` says otherwise, when the pictures differ.
        @Test func twoRendersOfASceneAreTheSameFrameForFrame() throws {
            let dir = try TempDir()
            let scene = try dir.write("moving.yaml", """
            size: 320x180
            fps: 25
            widgets:
              - {id: strip, type: timecode, place: {edge: top, size: 0.1}}
              - {id: clock, type: clock, format: "HH:mm:ss.SSS", timezone: UTC, place: {edge: left, size: 0.5}}
              - {id: memo, type: ticker, items: ["Same input, same output, frame for frame"], place: fill}
            """)
            var runs: [[String]] = []
            for name in ["one.mkv", "two.mkv"] {
                let r = try tool([binary, "render", scene, "--duration", "3", "-o", dir.file(name)])
                #expect(r.status == 0, "\(r.out)\(r.err)")
                runs.append(try frameHashes(dir.file(name)))
            }
            #expect(runs[0].count == 75 && runs[0] == runs[1], "\(runs[0].count) vs \(runs[1].count) frames")
            let shifted = try tool([binary, "render", scene, "--duration", "3", "--wall", "2026-01-02T03:04:05Z",
                                    "-o", dir.file("other.mkv")])
            #expect(shifted.status == 0, "\(shifted.err)")
            let other = try frameHashes(dir.file("other.mkv"))
            #expect(other.count == 75 && other != runs[0])
            // Every frame is what the scene draws for its number and time (the clock at frame 50 shows 00:00:02.000).
            let seen = try damage(dir.file("one.mkv"), against: scene)
            #expect(seen.first == 0 && seen.last == 74 && seen.corrupt == 0 && seen.compared == 75, "\(seen.out)")
        }

        /// A cue lands on its frame, in the main picture's file and in a rendition's (`FILE@WxH`, the scene laid out
        /// for that size): the text set at 1.5 s shows first in frame 45 and in every frame after it. Against the
        /// scene before the change, exactly the 45 frames from 45 on differ (probe --reference); against the scene
        /// after it, exactly the 45 before. A cue for a widget that is not there, or past the end, is refused with
        /// where it is written.
        @Test func aCueLandsOnItsFrame() throws {
            let dir = try TempDir()
            let before = try textScene(dir, "before.yaml", "Before", size: "320x180", strip: 0.1)
            let after = try textScene(dir, "after.yaml", "After the cue", size: "320x180", strip: 0.1)
            let cues = try dir.write("cues.yaml", "- {at: 1.5, widget: lower, set: {text: After the cue}}\n")
            let out = dir.file("cued.mkv"), small = dir.file("cued-small.mkv")
            let r = try tool([binary, "render", before, "--duration", "3", "--cues", cues, "-o", out, "-o", small + "@480x270"])
            #expect(r.status == 0, "\(r.out)\(r.err)")
            let sizes = try tool(["ffprobe", "-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", small])
            #expect(sizes.out.trimmingCharacters(in: .whitespacesAndNewlines) == "480,270", "\(sizes.out)")
            // Which second the damaged frames are in (a file's frame counts in the second where its display ends:
            // second 0 holds frames 0…28, second 1 29…58, second 2 59…88): 45…89 and 0…44 exactly.
            for file in [out, small] {
                for (reference, seconds) in [(before, [0, 14, 30, 1]), (after, [29, 16, 0, 0])] {
                    let seen = try damage(file, against: reference)
                    #expect(seen.compared == 90 && seen.corrupt == 45 && seen.bySecond == seconds,
                            "\(file) against \(reference): \(seen.bySecond) \(seen.out)")
                }
            }
            let wrong = try dir.write("wrong.yaml", "- {at: 1, widget: lower, set: {text: ok}}\n- {at: 2, widget: nobody, set: {text: x}}\n")
            let late = try dir.write("late.yaml", "- {at: 9, widget: lower, set: {text: x}}\n")
            for (file, message) in [(wrong, "wrong.yaml:2:3: no widget 'nobody'"), (late, "late.yaml:1:3: frame 270 is past the render's end")] {
                let refused = try tool([binary, "render", before, "--duration", "3", "--cues", file, "-o", dir.file("no.mkv")])
                #expect(refused.status != 0 && refused.err.contains(message), "\(refused.err)")
            }
            #expect(!FileManager.default.fileExists(atPath: dir.file("no.mkv")))
        }

        /// Refused before a frame is drawn, each with what to do, and nothing written over: a file that exists
        /// (unless --overwrite), an unknown extension, a file named twice, a folder that is not there, no file, a
        /// zero duration, music that is not there, and a scene with a video layer.
        @Test func badRendersAreRefusedAndOverwriteNothing() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let kept = try dir.write("kept.mp4", "not a video, and it stays")
            _ = try tool(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x36:rate=10", "-t", "0.5",
                          dir.file("clip.mkv")])
            let video = try dir.write("video.yaml", """
            size: 320x180
            widgets:
              - {id: layer, type: video, source: clip.mkv, place: fill}
            """)
            let cases: [([String], String)] = [
                ([scene, "--duration", "1", "-o", kept], "exists; pass --overwrite"),
                ([scene, "--duration", "1", "-o", dir.file("x.avi")], "writes .mp4, .mkv or .ts"),
                ([scene, "--duration", "1", "-o", dir.file("a.mkv"), "-o", dir.file("a.mkv")], "named twice"),
                ([scene, "--duration", "1", "-o", "/nonexistent/x.mp4"], "does not exist or is not writable"),
                ([scene, "--duration", "1"], "name a file to write"),
                ([scene, "--duration", "0", "-o", dir.file("z.mp4")], "more than 0 seconds"),
                ([scene, "--duration", "1", "--audio", dir.file("song.mp3"), "-o", dir.file("m.mp4")], "song.mp3"),
                ([video, "--duration", "1", "-o", dir.file("w.mp4")], "widget 'layer' (video) runs on the wall clock"),
            ]
            for (args, message) in cases {
                let r = try tool([binary, "render"] + args)
                #expect(r.status != 0 && r.err.contains(message), "\(args): \(r.err)")
            }
            let still = try String(contentsOfFile: kept, encoding: .utf8)
            #expect(still == "not a video, and it stays")
            for name in ["x.avi", "a.mkv", "z.mp4", "m.mp4", "w.mp4"] {
                #expect(!FileManager.default.fileExists(atPath: dir.file(name)), "\(name) was written")
            }
            let replaced = try tool([binary, "render", scene, "--duration", "1", "--overwrite", "-o", kept])
            let frames = try frameHashes(kept).count
            #expect(replaced.status == 0 && frames == 30, "\(replaced.err)")
        }

        /// Music in a render is decoded in order and put on the frames' timeline to the sample: a render's own ticks,
        /// taken out to a WAV file and given back as `--audio FILE`, sit on the picture's seconds again (`probe --av`:
        /// 0 within a millisecond); two renders with that music are the same sound; a render longer than the file has
        /// sound to its end (the playlist loops).
        @Test func musicIsOnTheFramesToTheSample() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let ticks = dir.file("ticks.mkv"), wav = dir.file("ticks.wav")
            #expect(try tool([binary, "render", scene, "--duration", "4", "--audio", "ticks", "-o", ticks]).status == 0)
            let taken = try tool(["ffmpeg", "-v", "error", "-i", ticks, "-vn", "-c:a", "pcm_s16le", wav])
            #expect(taken.status == 0, "\(taken.err)")
            var hashes: [String] = []
            for name in ["one.mkv", "two.mkv"] {
                let file = dir.file(name)
                let r = try tool([binary, "render", scene, "--duration", "4", "--audio", wav, "-o", file])
                #expect(r.status == 0 && r.out.contains("120 frames"), "\(r.out)\(r.err)")
                let (av, _, out) = try probeAV([file, "--reference", scene])
                try expectAVOffset(try #require(av, "\(out)"), 0, file, atLeast: 3)
                let sound = try tool(["ffmpeg", "-v", "error", "-i", file, "-map", "0:a:0", "-f", "md5", "-"])
                hashes.append(sound.out)
            }
            #expect(hashes[0] == hashes[1] && hashes[0].hasPrefix("MD5="), "\(hashes)")
            // Longer than the file: it plays again from its start, the sound as long as the picture.
            let looped = dir.file("looped.mkv")
            #expect(try tool([binary, "render", scene, "--duration", "10", "--audio", wav, "-o", looped]).status == 0)
            let length = try tool(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "packet=pts_time",
                                   "-of", "csv=p=0", looped]).out.split(separator: "\n").compactMap { Double($0) }.max() ?? 0
            #expect(length > 9.9, "the sound ends at \(length) s")
        }

        /// A file that fails mid-render (a full disk: a file that is `/dev/full`) is dropped and named, and never holds
        /// the render up: the file beside it is finished whole (ffmpeg decodes all 90 frames), the exit status says the
        /// render failed.
        @Test func aFileThatFailsLeavesTheOthersWhole() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let full = dir.file("full.mkv"), good = dir.file("good.mkv")
            try FileManager.default.createSymbolicLink(atPath: full, withDestinationPath: "/dev/full")
            let r = try tool([binary, "render", scene, "--duration", "3", "--audio", "ticks", "--overwrite", "-o", full, "-o", good])
            #expect(r.status != 0 && r.err.contains("could not finish \(full)") && r.err.contains("No space left")
                    && r.err.contains("written whole: \(good)"), "\(r.out)\(r.err)")
            #expect(try frameHashes(good).count == 90)
            let (av, _, out) = try probeAV([good])
            try expectAVOffset(try #require(av, "\(out)"), 0, good, atLeast: 2)
        }
    }
}
