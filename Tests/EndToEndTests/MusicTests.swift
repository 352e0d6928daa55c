import Foundation
import Testing
import TestSupport

/// Audio files made by ffmpeg for the music tests: pure tones, so what a recording plays at each moment can be told
/// by its frequency.
struct MusicFixtures {
    let dir: TempDir

    /// `seconds` of a sine at `hz` (or `expression` for aevalsrc) in `name`, with ffmpeg's extra arguments.
    @discardableResult
    func tone(_ name: String, hz: Int, seconds: Double, rate: Int = 44_100, channels: Int = 1,
              extra: [String] = []) throws -> String {
        let path = dir.file(name)
        let r = try tool(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
                          "sine=f=\(hz):d=\(seconds):sample_rate=\(rate)", "-ac", String(channels)] + extra + [path])
        #expect(r.status == 0, "ffmpeg: \(r.err)")
        return path
    }

    /// A square of one colour as PNG: the cover art.
    func cover(_ name: String, color: String) throws -> String {
        let path = dir.file(name)
        let r = try tool(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=\(color):s=160x160",
                          "-frames:v", "1", path])
        #expect(r.status == 0, "ffmpeg: \(r.err)")
        return path
    }
}

/// The frequency of the sound in each `window` seconds of a file's first audio track (zero crossings), and its peak.
func soundWindows(_ path: String, window: Double = 0.25) throws -> [(start: Double, hz: Double, peak: Int)] {
    let raw = path + ".s16"
    let r = try tool(["ffmpeg", "-v", "error", "-y", "-i", path, "-map", "0:a:0", "-f", "s16le", "-ac", "1", "-ar", "48000", raw])
    #expect(r.status == 0, "\(r.err)")
    let data = try Data(contentsOf: URL(fileURLWithPath: raw))
    let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    let n = Int(48_000 * window)
    var out: [(Double, Double, Int)] = []
    var i = 0
    while i + n <= samples.count {
        var crossings = 0, peak = 0
        for j in i..<(i + n) {
            peak = max(peak, abs(Int(samples[j])))
            if j > i && (samples[j - 1] < 0) != (samples[j] < 0) { crossings += 1 }
        }
        out.append((Double(i) / 48_000, Double(crossings) / 2 / window, peak))
        i += n
    }
    return out
}

/// A PNG's pixels as RGB bytes (through ffmpeg).
func rgbPixels(_ png: String) throws -> [UInt8] {
    let raw = png + ".rgb"
    let r = try tool(["ffmpeg", "-v", "error", "-y", "-i", png, "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
    #expect(r.status == 0, "\(r.err)")
    return [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
}

extension EndToEnd {
    @Suite(.serialized) struct MusicTests {
        static let cardScene = """
        size: 640x360
        fps: 30
        background: "#101820"
        widgets:
          - {id: card, type: nowplaying, title: "Nothing yet", place: fill}
        """

        /// A playlist of an MP3 (44.1 kHz mono, tagged) and a FLAC (22.05 kHz mono, tagged, with cover art) plays in
        /// order and starts again; the recording holds each file's sound where it should; the card shows each file's
        /// title, artist and cover, the picture being what `snapshot` draws for a card that says so.
        @Test func aPlaylistPlaysInOrderAgainAndAgainAndTheCardShowsEachFilesTags() throws {
            let dir = try TempDir()
            let make = MusicFixtures(dir: dir)
            try make.tone("a.mp3", hz: 440, seconds: 3, extra: ["-metadata", "title=Fixture Song",
                                                                 "-metadata", "artist=The Testers", "-metadata", "album=Suite One"])
            let cover = try make.cover("cover.png", color: "red")
            try make.tone("b.flac", hz: 880, seconds: 2, rate: 22_050,
                          extra: ["-i", cover, "-map", "0", "-map", "1", "-c:v", "png", "-disposition:v", "attached_pic",
                                  "-metadata", "title=Second Song", "-metadata", "artist=B"])
            let list = try dir.write("list.m3u", "# a playlist: comments, blank lines and paths relative to it\na.mp3\n\nb.flac\n")
            let scene = try dir.write("card.yaml", Self.cardScene)
            let out = dir.file("music.mp4")
            let (p, _) = try startLive([scene, "--audio", list, "--record", out, "--duration", "9"], rtsp: false)
            let c = try #require(controlURL(p))
            let events = try LiveProcess(binary, ["ctl", "--control", c, "events"])
            #expect(events.waitForLine { $0.contains("listening for events") } != nil)
            #expect(events.waitForLine { $0.contains("trackChanged") && $0.contains("Second Song") } != nil,
                    "\(events.allOutput)\n\(p.allOutput)")

            // While the FLAC plays, the card shows its tags and cover, as a card given them in a scene is drawn.
            let expected = dir.file("expected.png")
            let cardSays = Self.cardScene.replacingOccurrences(of: #"title: "Nothing yet""#,
                                                               with: "title: Second Song, artist: B, artwork: \(cover), duration: 2")
            let snap = try tool([binary, "snapshot", try dir.write("says.yaml", cardSays), "--size", "640x360", "-o", expected])
            #expect(snap.status == 0, "\(snap.err)")
            let want = try rgbPixels(expected)
            // Rows above the progress row: artwork, title and artist (the bar and times move with the music).
            let rows = 230 * 640 * 3
            var best = 0.0
            var n = 0
            try poll(until: {
                let (code, png) = http("GET", c + "/v1/frame.png")
                #expect(code == 200)
                let f = dir.file("live-\(n).png")
                n += 1
                try png.write(to: URL(fileURLWithPath: f))
                let got = try rgbPixels(f)
                guard got.count == want.count else { return false }
                let same = (0..<rows).filter { got[$0] == want[$0] }.count
                best = max(best, Double(same) / Double(rows))
                return best >= 0.99
            }, timeout: 10)
            #expect(best >= 0.99, "the live card matched the expected picture in \(best * 100) % of its upper part")
            #expect(events.waitForLine { $0.contains("trackChanged") && $0.contains("Fixture Song") && $0.contains("\"0\"") } != nil,
                    "the playlist did not start again: \(events.allOutput)")
            #expect(p.waitForExit(timeout: 60) == 0, "\(p.allOutput)")
            #expect(p.stdout.contains { $0.contains("music: file") && $0.contains("0 ms of silence") }, "\(p.allOutput)")

            // 0–3 s the MP3 (440 Hz), 3–5 s the FLAC (880 Hz), 5–8 s the MP3 again, then the FLAC: each window
            // not on a boundary has the file's tone, at the file's loudness.
            let windows = try soundWindows(out)
            #expect(windows.count >= 34, "\(windows.count) windows of sound in 9 s")
            for w in windows {
                let t = w.start + 0.125
                let boundary = [0.0, 3, 5, 8].contains { abs(t - $0) < 0.3 }
                guard !boundary else { continue }
                let hz = (t < 3 || (t > 5 && t < 8)) ? 440.0 : 880.0
                #expect(abs(w.hz - hz) <= 8 && w.peak > 2000, "at \(w.start) s: \(w.hz) Hz, peak \(w.peak); expected \(hz) Hz")
            }
            let streams = try tool(["ffprobe", "-v", "error", "-select_streams", "a", "-show_entries",
                                    "stream=codec_name,sample_rate,channels", "-of", "csv=p=0", out])
            #expect(streams.out.trimmingCharacters(in: .whitespacesAndNewlines) == "aac,48000,2", "\(streams.out)")
        }

        /// Pause holds the music (silence, nothing skipped), play goes on from the same place, a skip of seconds
        /// moves within the file, and skip next/previous change file; the answers say where the music went.
        @Test func pauseHoldsTheMusicAndSkipsMoveInIt() throws {
            let dir = try TempDir()
            let make = MusicFixtures(dir: dir)
            // One file of two parts: 4 s at 440 Hz then 8 s at 880 Hz, so the frequency tells where in it we are.
            let low = try make.tone("low.wav", hz: 440, seconds: 4)
            let high = try make.tone("high.wav", hz: 880, seconds: 8)
            let song = dir.file("song.ogg")
            let joined = try tool(["ffmpeg", "-v", "error", "-y", "-i", low, "-i", high, "-filter_complex",
                                   "[0:a][1:a]concat=n=2:v=0:a=1", "-c:a", "libvorbis", "-metadata", "title=Halves", song])
            #expect(joined.status == 0, "\(joined.err)")
            let other = try make.tone("other.wav", hz: 660, seconds: 8)
            let list = try dir.write("two.m3u", "\(song)\n\(other)\n")
            let out = dir.file("skips.ts")
            let (p, _) = try startLive([try dir.write("card.yaml", Self.cardScene), "--audio", list, "--record", out], rtsp: false)
            let c = try #require(controlURL(p))
            func frame() -> Int {
                let (_, body) = http("GET", c + "/v1/status")
                return ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["frame"] as? Int ?? -1
            }
            // Waits for the status line (printed every half second) that shows `k` more frames sent.
            func waitFrames(_ k: Int) {
                let target = frame() + k
                let seen = p.waitForLine { line in
                    let words = line.split(separator: " ")
                    return words.count > 3 && words[0] == "status:" && (Int(words[3]) ?? 0) >= target
                }
                #expect(seen != nil, "frame \(target) never came: \(p.allOutput)")
            }
            func post(_ path: String, _ body: String) -> [String: Any] {
                let (code, data) = http("POST", c + path, body: Data(body.utf8))
                #expect(code == 200, "\(path) \(body): \(String(decoding: data, as: UTF8.self))")
                return ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any]) ?? [:]
            }
            waitFrames(30)
            // +4 s: from about 1 s into the low part to about 5 s, in the high part.
            let skipped = post("/v1/skip", #"{"seconds": 4}"#)
            #expect(skipped["track"] as? Int == 0 && (skipped["position"] as? Double ?? 0) > 4.5, "\(skipped)")
            #expect(skipped["media"] == nil, "a live scene has no scene time to skip: \(skipped)")
            waitFrames(30)
            _ = post("/v1/pause", "")
            waitFrames(45)
            _ = post("/v1/play", "")
            waitFrames(30)
            let next = post("/v1/skip", #"{"track": "next"}"#)
            #expect(next["track"] as? Int == 1 && next["file"] as? String == other, "\(next)")
            waitFrames(30)
            let back = post("/v1/skip", #"{"track": "previous"}"#)
            #expect(back["track"] as? Int == 0, "\(back)")
            waitFrames(30)
            let (_, body) = http("GET", c + "/v1/status")
            let music = ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["music"] as? [String: Any]
            #expect(music?["index"] as? Int == 0 && music?["files"] as? Int == 2 && music?["title"] as? String == "Halves",
                    "\(String(decoding: body, as: UTF8.self))")
            #expect((music?["position"] as? Double ?? -1) > 0.5, "\(String(decoding: body, as: UTF8.self))")
            p.signal(SIGINT)
            #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")

            // What the recording plays, in order: low, high (the skip), silence (the pause), high again (play goes on
            // where it stood), the other file (next), the song from its start (previous), low.
            var runs: [(kind: String, seconds: Double)] = []
            for w in try soundWindows(out) {
                let kind = w.peak < 200 ? "silence" : abs(w.hz - 440) <= 8 ? "low" : abs(w.hz - 880) <= 8 ? "high"
                    : abs(w.hz - 660) <= 8 ? "other" : "mixed"
                if kind == "mixed" { continue }   // a window across a change
                if runs.last?.kind == kind { runs[runs.count - 1].seconds += 0.25 } else { runs.append((kind, 0.25)) }
            }
            let order = runs.filter { $0.seconds >= 0.5 }.map(\.kind)
            #expect(order == ["low", "high", "silence", "high", "other", "low"], "\(runs)")
            // The skip left out about 4 s: the high half comes after about 1 s of the low one, not after 4.
            #expect((runs.first?.seconds ?? 9) < 2.5, "\(runs)")
            #expect(runs.first { $0.kind == "silence" }.map { $0.seconds >= 1.0 } == true, "the pause: \(runs)")
        }

        /// Bad music is refused before anything starts, naming the file (and the playlist line or scene position);
        /// a folder skips what is not audio and plays the rest, whatever its rate and channel layout.
        @Test func badMusicIsRefusedByNameAndOddFormatsPlay() throws {
            let dir = try TempDir()
            let make = MusicFixtures(dir: dir)
            let text = try dir.write("notes.mp3", "these are words, not sound\n")
            let picture = try make.cover("picture.png", color: "blue")
            let empty = try dir.write("empty.m3u", "# nothing here\n\n")
            let holed = try dir.write("holed.m3u", "# one good, one gone\n\(try make.tone("ok.wav", hz: 440, seconds: 1))\nmissing.flac\n")
            let cases: [([String], String)] = [
                (["--audio", dir.file("gone.mp3")], "no such file '\(dir.file("gone.mp3"))'"),
                (["--audio", text], "'\(text)' is not an audio file GStreamer can read"),
                (["--audio", picture], "'\(picture)' holds no sound"),
                (["--audio", empty], "the playlist '\(empty)' is empty"),
                (["--audio", holed], "holed.m3u line 3: no such file '\(dir.file("missing.flac"))'"),
            ]
            for (args, message) in cases {
                let r = try tool([binary, "run", "--duration", "1", "--no-control"] + args)
                #expect(r.status != 0 && r.err.contains(message), "\(args): \(r.err)")
                #expect(!r.out.contains("serving"), "started anyway: \(r.out)")
            }
            let scene = try dir.write("music.yaml", "size: 320x180\naudio: songs/first.mp3\nwidgets: []\n")
            let r = try tool([binary, "run", scene, "--duration", "1", "--no-control"])
            #expect(r.status != 0 && r.err.contains("music.yaml:2:8") && r.err.contains("songs/first.mp3"), "\(r.err)")

            // A folder: 5.1 at 96 kHz and 8 kHz mono play, mixed and resampled to 48 kHz stereo; the text is skipped.
            let folder = try TempDir()
            let sub = MusicFixtures(dir: folder)
            try sub.tone("1-surround.wav", hz: 440, seconds: 1.5, rate: 96_000, channels: 6)
            try sub.tone("2-phone.wav", hz: 880, seconds: 1.5, rate: 8_000)
            _ = try folder.write("3-readme.txt", "not sound")
            let out = dir.file("folder.mkv")
            let run = try tool([binary, "run", "--size", "320x180", "--audio", folder.path, "--record", out,
                                "--duration", "3", "--no-control"])
            #expect(run.status == 0, "\(run.err)")
            #expect(run.err.contains("skipped") && run.err.contains("3-readme.txt"), "\(run.err)")
            let windows = try soundWindows(out)
            let kinds = windows.filter { abs($0.start + 0.125 - 1.5) > 0.3 && $0.start + 0.25 <= 2.9 }
                .map { (abs($0.hz - 440) <= 8 ? 440 : abs($0.hz - 880) <= 8 ? 880 : Int($0.hz), $0.start < 1.5 ? 440 : 880) }
            #expect(!kinds.isEmpty && kinds.allSatisfy { $0.0 == $0.1 }, "\(kinds)")
        }
    }
}
