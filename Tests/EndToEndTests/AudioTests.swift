import Foundation
import Testing
import TestSupport

/// Where each stream of a file starts and ends (first PTS, last PTS + duration), read by ffprobe.
func streamSpan(_ path: String, _ stream: String) throws -> (start: Double, end: Double)? {
    let r = try tool(["ffprobe", "-v", "error", "-select_streams", stream, "-show_entries",
                      "packet=pts_time,duration_time", "-of", "csv=p=0", path])
    var start = Double.infinity, end = -Double.infinity
    for line in r.out.split(separator: "\n") {
        let f = line.split(separator: ",").map { Double($0) }
        guard f.count >= 2, let pts = f[0], let d = f[1] else { continue }
        start = min(start, pts)
        end = max(end, pts + d)
    }
    return start.isFinite ? (start, end) : nil
}

/// The onsets (ms from the file's start) of ticks in a file's sound, decoded by ffmpeg to 48 kHz mono.
func tickOnsets(_ path: String) throws -> [Double] {
    let dir = try TempDir()
    let raw = dir.file("sound.raw")
    let r = try tool(["ffmpeg", "-v", "error", "-y", "-i", path, "-f", "s16le", "-ac", "1", "-ar", "48000", raw])
    guard r.status == 0, let data = FileManager.default.contents(atPath: raw) else { return [] }
    var onsets: [Double] = []
    var lastLoud = -48_000
    data.withUnsafeBytes { bytes in
        let s = bytes.bindMemory(to: Int16.self)
        for i in 0..<s.count where abs(Int(s[i])) >= 4096 {
            if i - lastLoud > 4800 { onsets.append(Double(i) / 48) }
            lastLoud = i
        }
    }
    return onsets
}

/// `probe --json` on `url`: the report's `av` section.
func probeAV(_ args: [String], timeout: TimeInterval = 90) throws -> (av: [String: Any]?, total: [String: Any]?, out: String) {
    let r = try tool([binary, "probe", "--av", "--json", "--quiet"] + args, timeout: timeout)
    let json = (try? JSONSerialization.jsonObject(with: Data(r.out.utf8))) as? [String: Any]
    return (json?["av"] as? [String: Any], json?["total"] as? [String: Any], r.out + r.err)
}

/// The A/V offsets `probe --av` measured are all within `tolerance` ms of `offset`, over at least `ticks` ticks,
/// none missing and no stray sound.
func expectAVOffset(_ av: [String: Any], _ offset: Double, _ what: String, atLeast ticks: Int,
                    tolerance: Double = 1) throws {
    let o = try #require(av["offsetMs"] as? [String: Any], "\(what): \(av)")
    let (lo, hi) = (try #require(o["min"] as? Double), try #require(o["max"] as? Double))
    #expect(abs(lo - offset) <= tolerance && abs(hi - offset) <= tolerance, "\(what): \(o)")
    #expect((av["ticks"] as? Int ?? 0) >= ticks, "\(what): \(av)")
    #expect(av["strayOnsets"] as? Int == 0 && av["missingTicks"] as? Int == 0, "\(what): \(av)")
}

/// The ticks of seconds 1, 2 and 3 in a 4 s recording, where ffmpeg's decoder puts them: a second apart to 0.5 ms
/// (the rise to a quarter of the tick's amplitude takes 0.04 ms), and on the picture's seconds (`probe --av`: the
/// offset against the timecode the pictures carry, 0 within 1 ms). Not at 1000, 2000 and 3000 ms into the file: a
/// recording whose first frames were dropped on a loaded machine starts at a later moment of the scene (one such run
/// started 333 ms in, its ticks at 666.7, 1666.7 and 2666.7 ms, still on the picture's seconds).
func expectTicksOnTheSeconds(_ file: String) throws {
    let onsets = try tickOnsets(file)
    #expect(onsets.count == 3, "\(file): \(onsets)")
    for (a, b) in zip(onsets, onsets.dropFirst()) { #expect(abs(b - a - 1000) < 0.5, "\(file): \(onsets)") }
    let (av, _, out) = try probeAV([file])
    try expectAVOffset(try #require(av, "\(out)"), 0, file, atLeast: 3)
}

extension EndToEnd {
    @Suite(.serialized) struct AudioTests {
        @Test func recordingsCarryAACAsLongAsThePictureWithTicksOnTheSecondsAsFFmpegDecodesThem() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let files = ["mp4", "mkv", "ts"].map { dir.file("ticks.\($0)") }
            let p = try LiveProcess(binary, ["run", scene, "--size", "640x360", "--audio", "ticks", "--duration", "4",
                                             "--no-control"] + files.flatMap { ["--record", $0] })
            #expect(p.waitForExit(timeout: 60) == 0, "\(p.allOutput)")
            // Nothing to warn about (a muxer whose tracks' latencies did not meet warned once a buffer).
            #expect(!p.allOutput.contains("warning"), "\(p.allOutput)")
            for f in files {
                let codecs = try tool(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,sample_rate",
                                       "-of", "csv=p=0", f]).out
                #expect(codecs.contains("h264") && codecs.contains("aac,48000"), "\(f): \(codecs)")
                let video = try #require(try streamSpan(f, "v"), "\(f)")
                let audio = try #require(try streamSpan(f, "a"), "\(f)")
                let (videoLength, audioLength) = (video.end - video.start, audio.end - audio.start)
                // Both tracks start together and end within one frame (33 ms) of each other.
                #expect(abs(audio.start - video.start) < 0.034, "\(f): video \(video) audio \(audio)")
                #expect(abs(audioLength - videoLength) < 0.034, "\(f): video \(video) audio \(audio)")
                try expectTicksOnTheSeconds(f)
            }
            // Opus when asked, in MKV only (the MP4 beside it keeps AAC): ticks where ffmpeg decodes them, and the
            // probe places them on the second.
            let opus = dir.file("opus.mkv"), aac = dir.file("beside.mp4")
            let o = try LiveProcess(binary, ["run", scene, "--size", "640x360", "--audio", "ticks", "--audio-codec", "opus",
                                             "--duration", "4", "--no-control", "--record", opus, "--record", aac])
            #expect(o.waitForExit(timeout: 60) == 0, "\(o.allOutput)")
            #expect(!o.allOutput.contains("warning"), "\(o.allOutput)")
            let opusCodecs = try tool(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,sample_rate", "-of", "csv=p=0", opus]).out
            #expect(opusCodecs.contains("h264") && opusCodecs.contains("opus,48000"), "\(opusCodecs)")
            #expect(try tool(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name", "-of", "csv=p=0", aac]).out.contains("aac"))
            let video = try #require(try streamSpan(opus, "v")), audio = try #require(try streamSpan(opus, "a"))
            #expect(abs((audio.end - audio.start) - (video.end - video.start)) < 0.034, "video \(video) audio \(audio)")
            try expectTicksOnTheSeconds(opus)
            // A stream with sound but no ticks: the probe says so and still reports the picture.
            let tone = dir.file("tone.mkv")
            let q = try LiveProcess(binary, ["run", scene, "--size", "640x360", "--audio", "tone:440", "--duration", "2",
                                             "--no-control", "--record", tone])
            #expect(q.waitForExit(timeout: 60) == 0, "\(q.allOutput)")
            let text = try tool([binary, "probe", "--av", tone])
            #expect(text.status == 0 && text.out.contains("no ticks found") && text.out.contains("dropped 0"), "\(text.out)\(text.err)")
            // Without sound there is no A/V section at all.
            let silent = dir.file("silent.ts")
            let s = try LiveProcess(binary, ["run", scene, "--size", "640x360", "--duration", "2", "--no-control",
                                             "--record", silent])
            #expect(s.waitForExit(timeout: 60) == 0)
            let (av, total, out) = try probeAV([silent])
            #expect(av?["decoded"] as? Bool == false && total?["frames"] as? Int ?? 0 > 50, "\(out)")
            #expect(try tool([binary, "probe", "--av", silent]).out.contains("sound: none in this stream"))
            let types = try tool(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", silent]).out
            #expect(types.contains("video") && !types.contains("audio"), "\(types)")
        }

        @Test func anInjectedAVOffsetIsMeasuredWithinAMillisecondOverRTSPTCPUDPAndInAFile() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            for offset in [-40.0, 40, 100] {
                let file = dir.file("offset\(Int(offset)).mp4")
                let (p, url) = try startLive([scene, "--audio", "ticks", "--inject-av-offset-ms", String(offset),
                                              "--record", file])
                let u = try #require(url, "\(p.allOutput)")
                if offset == -40 {
                    let streams = try tool(["ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-show_entries",
                                            "stream=codec_name", "-of", "csv=p=0", u], timeout: 30).out
                    #expect(streams.contains("h264") && streams.contains("aac"), "RTSP streams: \(streams)")
                }
                // Both transports at once: 12 s holds the receiver's alignment of the tracks (its first RTCP
                // sender reports, a few seconds in) and several ticks after it.
                let probes = try ["tcp", "udp"].map {
                    try LiveProcess(binary, ["probe", u, "--av", "--transport", $0, "--duration", "12", "--json", "--quiet"])
                }
                for (i, transport) in ["tcp", "udp"].enumerated() {
                    #expect(probes[i].waitForExit(timeout: 60) == 0, "\(probes[i].allOutput)")
                    let json = (try? JSONSerialization.jsonObject(with: Data(probes[i].stdout.joined(separator: "\n").utf8)))
                        as? [String: Any]
                    let av = try #require(json?["av"] as? [String: Any], "\(transport): \(probes[i].allOutput)")
                    try expectAVOffset(av, offset, "\(transport) \(offset)", atLeast: 3)
                }
                p.signal(SIGINT)
                #expect(p.waitForExit(timeout: 30) == 0)
                let (av, _, out) = try probeAV([file])
                let fileAV = try #require(av, "\(out)")
                try expectAVOffset(fileAV, offset, "file \(offset)", atLeast: 5)
            }
        }

        /// Two probes that start a just-started server's media together, one over UDP and one over TCP, both get
        /// picture and sound without a hole, four times over. (The probe's own gst-launch links could leave one of
        /// rtspsrc's two pads unlinked, about one start in thirty: that probe read nothing. And the first viewer of a
        /// media used to get a packet gst-rtsp-server held since it prepared the media, then half a second of
        /// nothing.)
        @Test func viewersStartingTogetherOverUDPAndTCPGetPictureAndSound() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            for start in 1...4 {
                let (p, url) = try startLive([scene, "--audio", "ticks"])
                let u = try #require(url, "\(p.allOutput)")
                let probes = try ["udp", "tcp"].map {
                    try LiveProcess(binary, ["probe", u, "--av", "--transport", $0, "--duration", "3", "--json", "--quiet"])
                }
                for (transport, probe) in zip(["udp", "tcp"], probes) {
                    #expect(probe.waitForExit(timeout: 60) == 0, "start \(start) \(transport): \(probe.allOutput)")
                    let json = (try? JSONSerialization.jsonObject(with: Data(probe.stdout.joined(separator: "\n").utf8)))
                        as? [String: Any]
                    let frames = (json?["total"] as? [String: Any])?["frames"] as? Int ?? 0
                    let av = json?["av"] as? [String: Any]
                    let heard = av?["heardSeconds"] as? Double ?? 0
                    // A second of each at least, in a probe of three, and the sound without a hole: the first
                    // viewer of a media used to get a packet gst-rtsp-server held since it prepared the media, then
                    // nothing for half a second.
                    #expect(frames >= 30 && heard >= 1, "start \(start) \(transport): \(frames) frames, \(heard) s of sound")
                    // No hole at all. The step rtpbin makes when it lines the sound up with the picture by the
                    // sender reports (its ts-offset, 4 to 96 ms here, in one start of four or five) is no sound
                    // missing, and the probe does not count it: CI failed twice on such steps counted as gaps.
                    #expect((av?["gapMs"] as? Double ?? 99) == 0, "start \(start) \(transport): \(av ?? [:])")
                }
                p.signal(SIGINT)
                #expect(p.waitForExit(timeout: 30) == 0)
            }
        }

        /// A UDP and a TCP viewer whose PLAYs reach a just-started server together both keep getting every stream,
        /// sixteen times over. gst-rtsp-server 1.22 plugs each transport's sinks while the stream flows; left
        /// waiting for a first buffer, they deadlocked the media (one stream, usually the sound, stopped for both):
        /// 3 starts of 20 before the fix, 0 of 30 after (rtsp_abuse.py sends both PLAYs in one go).
        @Test func playsArrivingTogetherOverUDPAndTCPDeadlockNoStream() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            for start in 1...16 {
                let (p, url) = try startLive([scene, "--audio", "ticks"])
                let u = try #require(url, "\(p.allOutput)")
                let viewers = try LiveProcess("/usr/bin/python3", [fixture("rtsp_abuse.py"), "together", u, "2"])
                let line = try #require(viewers.waitForLine(timeout: 30) { $0.hasPrefix("udp ") }, "\(viewers.allOutput)")
                // "udp V A tcp V A": packets of the picture and of the sound for each viewer, in 2 s.
                let counts = line.split(separator: " ").compactMap { Int($0) }
                #expect(counts.count == 4 && counts.allSatisfy { $0 >= 40 }, "start \(start): \(line)")
                #expect(viewers.waitForExit(timeout: 30) == 0)
                p.signal(SIGINT)
                #expect(p.waitForExit(timeout: 30) == 0)
            }
        }

        /// What the most common clients get: ffmpeg straight from the server and through a relay 100 ms away, while
        /// a viewer that set up only the sound never reads and another takes only the picture, both copy sound and
        /// picture 40 ms apart, as sent. (A viewer of one stream of two used to leave the other
        /// payloader unlinked, which stopped the shared media: every later DESCRIBE got 503, as it does from plain
        /// gst-rtsp-server.)
        @Test func ffmpegHearsTheSoundInSyncDirectlyAndThroughARelayBesideAStalledViewer() throws {
            let dir = try TempDir()
            let (p, url) = try startLive([try timecodeScene(dir), "--audio", "ticks", "--inject-av-offset-ms", "40"])
            let u = try #require(url, "\(p.allOutput)")
            let port = try #require(URL(string: u)?.port)
            let stalled = try LiveProcess("/usr/bin/python3", [fixture("rtsp_abuse.py"), "stall", u])
            #expect(stalled.waitForLine { $0 == "stalled" } != nil, "\(stalled.allOutput)")
            let pictureOnly = try LiveProcess("/usr/bin/env", ["ffmpeg", "-v", "error", "-rtsp_transport", "tcp",
                                                               "-allowed_media_types", "video", "-i", u, "-t", "14",
                                                               "-f", "null", "-"])
            let relay = try LiveProcess("/usr/bin/python3", [fixture("tcp_relay.py"), "--target", "127.0.0.1:\(port)",
                                                             "--port", "0", "--delay-ms", "100"])
            let relayPort = try #require(relay.waitForLine { $0.hasPrefix("listening ") }?.split(separator: " ").last)
            // Over TCP both: ffmpeg over UDP wrote, once in about a dozen runs, a file whose tracks it never lined up
            // (every tick 867 ms off, no sender report used in 12 s); not understood yet, so not asserted here.
            let routes = [("tcp", u, dir.file("direct.ts")), ("tcp", "rtsp://127.0.0.1:\(relayPort)/pip", dir.file("relayed.ts"))]
            let clients = try routes.map { transport, source, file in
                try LiveProcess("/usr/bin/env", ["ffmpeg", "-v", "error", "-rtsp_transport", transport, "-i", source,
                                                 "-t", "12", "-c", "copy", "-y", file])
            }
            for (c, route) in zip(clients, routes) {
                #expect(c.waitForExit(timeout: 60) == 0, "\(route.0): \(c.allOutput)")
                let (av, _, out) = try probeAV([route.2])
                let found = try #require(av, "\(route.0): \(out)")
                // ffmpeg aligns the tracks at its first RTCP sender report, a few seconds in; the file it writes
                // keeps what came before. `probe --av` leaves out what it can tell came before (a step back of the
                // sound included: one CI run read −240 ms and a stray onset until it did); the offsets are checked
                // from the fifth second on, as one CI run read +119.9 ms for an early tick, every later one +40.02:
                let ticks = (found["perTick"] as? [[String: Any]] ?? []).filter { ($0["second"] as? Int ?? 0) >= 5 }
                let offsets = ticks.compactMap { $0["offsetMs"] as? Double }
                #expect(offsets.count >= 5 && offsets.allSatisfy { abs($0 - 40) <= 1 }, "ffmpeg \(route.0): \(offsets) \(found)")
                #expect(found["strayOnsets"] as? Int == 0 && found["missingTicks"] as? Int == 0, "\(found)")
            }
            #expect(pictureOnly.waitForExit(timeout: 60) == 0, "picture only: \(pictureOnly.allOutput)")
            stalled.signal(SIGKILL)
            relay.signal(SIGKILL)
            _ = stalled.waitForExit()
            _ = relay.waitForExit()
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// A resize re-lays the picture and leaves the sound alone: the ticks of a recording across two resizes
        /// are still on every second, none missing or doubled.
        @Test func aResizeDoesNotTouchTheSound() throws {
            let dir = try TempDir()
            let file = dir.file("resized.ts")
            let (p, _) = try startLive([try timecodeScene(dir), "--audio", "ticks", "--record", file], rtsp: false)
            #expect(p.waitForFrames("record:\(file)", atLeast: 45), "\(p.allOutput)")
            p.send("resize 320x180")
            #expect(p.waitForLine { $0.contains("resized to 320x180") } != nil, "\(p.allOutput)")
            #expect(p.waitForFrames("record:\(file)", atLeast: 100), "\(p.allOutput)")
            p.send("resize 640x360")
            #expect(p.waitForLines(count: 2) { $0.contains("resized to") }, "\(p.allOutput)")
            #expect(p.waitForFrames("record:\(file)", atLeast: 170), "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            let onsets = try tickOnsets(file)
            #expect(onsets.count >= 5, "\(onsets)")
            for (i, o) in onsets.enumerated() { #expect(abs(o - Double(i + 1) * 1000) < 0.5, "\(onsets)") }
            let (av, _, out) = try probeAV([file])
            try expectAVOffset(try #require(av, "\(out)"), 0, "across resizes", atLeast: 5)
        }

        @Test func badSoundOptionsAreRefusedWithWhatToDo() throws {
            let cases: [([String], String)] = [
                (["--audio", "banjo"], "no such file 'banjo'; --audio takes none, ticks, tone"),
                (["--audio", "tone:5"], "20...20000"),
                (["--audio", "ticks", "--inject-av-offset-ms", "9000"], "-5000...5000"),
                (["--audio", "ticks", "--audio-codec", "mp3"], "invalid --audio-codec 'mp3': expected aac or opus"),
            ]
            for (args, message) in cases {
                let r = try tool([binary, "run", "--duration", "1", "--no-control"] + args)
                #expect(r.status != 0 && r.err.contains(message), "\(args): \(r.err)")
            }
        }
    }
}
