import Foundation
import Testing
import TestSupport

/// Starts `pipcompose run` with a free RTSP port and waits until it serves; returns the process and URL.
func startLive(_ args: [String], rtsp: Bool = true,
               environment: [String: String] = [:]) throws -> (LiveProcess, String?) {
    var all = ["run", "--size", "640x360", "--status-every", "0.5"] + args
    if !args.contains("--control") { all += ["--control", "127.0.0.1:0"] }
    // Without any output run serves RTSP on the fixed default port 8554: a test never takes it (another test or
    // a user's pipcompose may hold it), so such a run gets a port of its own too.
    let outputs = ["--rtsp", "--record", "--push", "--pipeline"]
    if rtsp || !args.contains(where: outputs.contains) { all += ["--rtsp", "127.0.0.1:0/pip"] }
    let p = try LiveProcess(binary, all, environment: environment)
    guard p.waitForLine(timeout: 30, { $0.contains(" at ") && $0.contains(" fps") }) != nil else {
        Issue.record("pipcompose did not start: \(p.allOutput)")
        return (p, nil)
    }
    let url = p.stdout.first { $0.hasPrefix("serving ") }.map { String($0.dropFirst("serving ".count)) }
    return (p, url)
}

/// The control URL a started instance printed.
func controlURL(_ p: LiveProcess) -> String? {
    p.stdout.first { $0.hasPrefix("control ") }.map { String($0.dropFirst("control ".count)) }
}

/// Frames an output reported in the end-of-run summary ("record:/x.mp4: 123 frames, …").
func summaryFrames(_ p: LiveProcess, _ output: String) -> Int? {
    p.stdout.last { $0.hasPrefix(output + ":") }.flatMap(LiveProcess.frames(in:))
}

/// Live tests run one at a time: each has an encoder busy on a 2-core machine.
extension EndToEnd {
    @Suite(.serialized) struct LiveTests {
        @Test func rtspServesOverTCPAndUDPAtTheRightSize() throws {
            let (p, url) = try startLive([])
            let u = try #require(url)
            for transport in ["tcp", "udp"] {
                let r = try tool(["ffprobe", "-v", "error", "-rtsp_transport", transport, "-show_entries",
                                  "stream=codec_name,width,height", "-of", "csv=p=0", u])
                #expect(r.status == 0, "\(transport): \(r.err)")
                #expect(r.out.trimmingCharacters(in: .whitespacesAndNewlines) == "h264,640,360", "\(transport)")
                // The session name is the scene's title.
                let title = try tool(["ffprobe", "-v", "error", "-rtsp_transport", transport, "-show_entries",
                                      "format_tags=title", "-of", "csv=p=0", u])
                #expect(title.out.trimmingCharacters(in: .whitespacesAndNewlines) == "pipcompose demo", "\(title.out)")
                let d = try tool(["ffmpeg", "-v", "error", "-rtsp_transport", transport, "-i", u, "-frames:v", "20",
                                  "-f", "null", "-"])
                #expect(d.status == 0, "\(transport): \(d.err)")
            }
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        @Test func threeViewersAtOnce() throws {
            let (p, url) = try startLive([])
            let u = try #require(url)
            let viewers = try (0..<3).map { i in
                try LiveProcess("/usr/bin/env", ["ffmpeg", "-v", "error", "-rtsp_transport", i == 1 ? "udp" : "tcp",
                                                 "-i", u, "-frames:v", "30", "-f", "null", "-"])
            }
            for v in viewers { #expect(v.waitForExit(timeout: 60) == 0, "\(v.allOutput)") }
            #expect(p.waitForLine(timeout: 5) { $0.contains("rtsp: 3 viewer(s)") } != nil)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        @Test func sigintFinalizesEveryRecording() throws {
            let dir = try TempDir()
            let files = ["a.mp4", "a.mkv", "a.ts"].map(dir.file)
            let (p, _) = try startLive(files.flatMap { ["--record", $0] }, rtsp: false)
            for f in files { #expect(p.waitForFrames("record:\(f)", atLeast: 45), "\(f): \(p.allOutput)") }
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            for f in files {
                let sent = try #require(summaryFrames(p, "record:\(f)"), "\(p.allOutput)")
                #expect(sent >= 45)
                #expect(try decodedFrames(f) == sent, "\(f)")
            }
            let title = try tool(["ffprobe", "-v", "error", "-show_entries", "format_tags=title", "-of", "csv=p=0", files[0]])
            #expect(title.out.contains("pipcompose demo"))
        }

        /// `--encoder-threads N` reaches x264: its settings, written into the stream (x264's SEI), name N threads, and
        /// the file plays; a count out of range is refused with the rule before anything starts.
        @Test func theEncoderThreadsAskedForAreX264s() throws {
            let dir = try TempDir()
            for threads in [1, 2] {
                let file = dir.file("t\(threads).mp4")
                let r = try pipcompose(["run", "--no-control", "--size", "320x180", "--duration", "2",
                                        "--encoder-threads", String(threads), "--record", file])
                #expect(r.status == 0, "\(r.stderr)")
                let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
                let settings = String(decoding: bytes.prefix(200_000), as: UTF8.self)
                #expect(settings.contains(" threads=\(threads) "), "threads \(threads): x264 wrote no such setting")
                #expect(try decodedFrames(file) == 60, "\(file)")
            }
            let bad = try pipcompose(["run", "--no-control", "--duration", "1", "--encoder-threads", "17"])
            #expect(bad.status != 0)
            #expect(bad.stderr.contains("--encoder-threads must be 0...16"), "\(bad.stderr)")
        }

        @Test func killedWithSignal9AfterSixSecondsTheFilesStillPlay() throws {
            let dir = try TempDir()
            let files = ["k.mp4", "k.mkv", "k.ts"].map(dir.file)
            let (p, _) = try startLive(files.flatMap { ["--record", $0] } + ["--audio", "ticks"], rtsp: false)
            // Six seconds of frames at 30 fps reached the files.
            for f in files { #expect(p.waitForFrames("record:\(f)", atLeast: 180)) }
            p.signal(SIGKILL)
            _ = p.waitForExit()
            for f in files {
                let frames = try decodedFrames(f) ?? 0
                #expect(frames >= 135, "\(f): only \(frames) frames (4.5 s = 135) survived kill -9")
                // The sound survived as far as the picture: ffmpeg hears the ticks of seconds 1 to 4.
                let ticks = try tickOnsets(f).filter { $0 < 4500 }
                #expect(ticks.count >= 4, "\(f): ticks at \(ticks) ms")
            }
        }

        @Test func aConnectedViewerDecodesBothSizesAcrossAResize() throws {
            let (p, url) = try startLive([])
            let u = try #require(url)
            let viewer = try LiveProcess("/usr/bin/env", ["ffmpeg", "-rtsp_transport", "tcp", "-i", u,
                                                          "-vf", "showinfo", "-f", "null", "-"])
            #expect(viewer.waitForLine(timeout: 30) { $0.contains("s:640x360") } != nil, "\(viewer.allOutput)")
            p.send("resize 480x270")
            #expect(viewer.waitForLine(timeout: 30) { $0.contains("s:480x270") } != nil)
            viewer.signal(SIGKILL)
            _ = viewer.waitForExit()
            // A new viewer gets the new size.
            let r = try tool(["ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-show_entries", "stream=width,height",
                              "-of", "csv=p=0", u])
            #expect(r.out.trimmingCharacters(in: .whitespacesAndNewlines) == "480,270")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        @Test func recordingsAcrossResizesFitSplitAndFollow() throws {
            let dir = try TempDir()
            let fit = dir.file("fit.mp4"), ts = dir.file("follow.ts"), split = dir.file("split.mkv")
            let (p1, _) = try startLive(["--record", fit, "--record", ts], rtsp: false)
            let (p2, _) = try startLive(["--record", split, "--record-resize", "split"], rtsp: false)
            for (p, f) in [(p1, fit), (p2, split)] {
                #expect(p.waitForFrames("record:\(f)", atLeast: 30))
                p.send("resize 320x180")
            }
            #expect(p1.waitForLine { $0.contains("resized to 320x180") } != nil)
            let second = dir.file("split-2.mkv")
            #expect(p2.waitForFrames("record:\(second)", atLeast: 30), "\(p2.allOutput)")
            #expect(p1.waitForFrames("record:\(ts)", atLeast: 90))
            p1.send("resize 640x360")
            #expect(p1.waitForFrames("record:\(ts)", atLeast: 130))
            for p in [p1, p2] {
                p.signal(SIGINT)
                #expect(p.waitForExit() == 0, "\(p.allOutput)")
            }
            // fit: one size all through, every frame plays.
            let fitSizes = try frameSizes(fit)
            #expect(fitSizes.count == summaryFrames(p1, "record:\(fit)"))
            #expect(Set(fitSizes) == ["640x360"])
            // follow: the TS changes size in place.
            #expect(Set(try frameSizes(ts)) == ["640x360", "320x180"])
            // split: one file per size, each playing.
            #expect(Set(try frameSizes(split)) == ["640x360"])
            #expect(Set(try frameSizes(second)) == ["320x180"])
            #expect(try decodedFrames(second) == summaryFrames(p2, "record:\(second)"))
        }

        /// The next part of a split recording starts off the frame loop; one that cannot be created (its folder was
        /// moved away while the first part was written) fails alone: the part before it and the recording beside it,
        /// split too, play whole.
        @Test func aSplitPartThatCannotStartFailsAlone() throws {
            let dir = try TempDir(), elsewhere = try TempDir()
            let folder = dir.file("parts"), moved = dir.file("moved")
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
            let split = folder + "/split.mkv", other = elsewhere.file("other.mkv")
            let (p, _) = try startLive(["--record", split, "--record", other, "--record-resize", "split"], rtsp: false)
            #expect(p.waitForFrames("record:\(split)", atLeast: 30))
            // The open file goes with its folder; the next part's name is in a folder that is gone.
            try FileManager.default.moveItem(atPath: folder, toPath: moved)
            p.send("resize 320x180")
            let blocked = folder + "/split-2.mkv", otherNext = elsewhere.file("other-2.mkv")
            #expect(p.waitForLine { $0.contains("record:\(blocked): cannot start") } != nil, "\(p.allOutput)")
            #expect(p.waitForFrames("record:\(otherNext)", atLeast: 30), "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            #expect(p.stdout.contains { $0.hasPrefix("record:\(blocked): failed after 0 frames") }, "\(p.allOutput)")
            #expect(try decodedFrames(moved + "/split.mkv") == summaryFrames(p, "record:\(split)"))
            for file in [other, otherNext] { #expect(try decodedFrames(file) == summaryFrames(p, "record:\(file)")) }
            #expect(Set(try frameSizes(otherNext)) == ["320x180"])
        }
    }

    @Suite struct LiveBadInputTests {
        func refused(_ args: [String], _ words: String) throws {
            let r = try pipcompose(["run", "--no-control", "--size", "320x180", "--duration", "1"] + args)
            #expect(r.status != 0, "accepted \(args)")
            #expect((r.stderr + r.stdout).contains(words), "\(args): \(r.stderr)")
        }

        @Test func badOutputsAreRefusedBeforeStarting() throws {
            let dir = try TempDir()
            try refused(["--record", dir.file("x.avi")], "use .mp4, .mkv or .ts")
            try refused(["--record", "/nonexistent-folder/x.mp4"], "does not exist")
            try refused(["--push", "ftp://example.com/x"], "unsupported scheme")
            try refused(["--push", "srt://127.0.0.1"], "needs a port")
            try refused(["--push", "rtmp://127.0.0.1/x"], "application and a stream key")
            try refused(["--rtsp", "99999/pip"], "port must be")
            try refused(["--encoder", "magic"], "--encoder must be one of")
            try refused(["--encoder", "nvenc"], "not installed")
            try refused(["--web-renew-growth", "70000"], "--web-renew-growth must be 0...65536 MiB")
            let bad = dir.file("bad.pipeline")
            try "appsrc name=in\nh264parse\nnosuchelement\nfakesink\n".write(toFile: bad, atomically: true, encoding: .utf8)
            try refused(["--pipeline", bad], "nosuchelement")
            let noIn = dir.file("noin.pipeline")
            try "appsrc name=src\nfakesink\n".write(toFile: noIn, atomically: true, encoding: .utf8)
            try refused(["--pipeline", noIn], "appsrc name=in")
        }

        @Test func aSecondInstanceOnTheSamePortIsRefused() throws {
            let (first, url) = try startLive([])
            let u = try #require(url)
            let port = try #require(URLComponents(string: u)?.port)
            let r = try pipcompose(["run", "--no-control", "--size", "320x180", "--duration", "1", "--rtsp", "127.0.0.1:\(port)/pip"])
            #expect(r.status != 0)
            #expect(r.stderr.contains("port is in use"), "\(r.stderr)")
            first.signal(SIGINT)
            #expect(first.waitForExit() == 0)
        }

        @Test func anUnreachablePushFailsAloneAndTheRecordingCompletes() throws {
            let dir = try TempDir()
            let file = dir.file("ok.ts")
            let r = try pipcompose(["run", "--no-control", "--size", "320x180", "--duration", "3", "--record", file,
                                    "--push", "rtsp://127.0.0.1:9/nothing"])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.contains("push:rtsp://127.0.0.1:9/nothing"), "\(r.stderr)")
            #expect(try decodedFrames(file) ?? 0 >= 60)
        }
    }
}
