import Foundation
import Testing
import TestSupport

extension EndToEnd {
    @Suite(.serialized) struct RobustnessTests {
        @Test func aFullDiskClosesThatRecordingAloneAndTheOthersComplete() throws {
            let dir = try TempDir()
            // Writing to /dev/full fails with "No space left on device", as a full disk does.
            let full = dir.file("full.ts")
            try FileManager.default.createSymbolicLink(atPath: full, withDestinationPath: "/dev/full")
            let good = dir.file("good.mkv")
            let (p, url) = try startLive(["--record", full, "--record", good])
            let u = try #require(url)
            #expect(p.waitForLine(timeout: 20) { $0.contains("record:\(full): failed and closed") } != nil, "\(p.allOutput)")
            // The stream and the other recording carry on.
            let r = try tool(["ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-show_entries", "stream=width",
                              "-of", "csv=p=0", u])
            #expect(r.out.trimmingCharacters(in: .whitespacesAndNewlines) == "640")
            #expect(p.waitForFrames("record:\(good)", atLeast: 60))
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            #expect(try decodedFrames(good) == summaryFrames(p, "record:\(good)"))
        }

        @Test func aUserPipelineReceivesTheStream() throws {
            let dir = try TempDir()
            let out = dir.file("custom.mkv")
            let pipeline = dir.file("mine.pipeline")
            try """
            # my own tail: re-mux to Matroska
            appsrc name=in
            h264parse
            matroskamux
            filesink location=\(out)
            """.write(toFile: pipeline, atomically: true, encoding: .utf8)
            let r = try pipcompose(["run", "--no-control", "--size", "320x180", "--duration", "2", "--pipeline", pipeline])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try decodedFrames(out) == 60)
            let dump = try pipcompose(["run", "--no-control", "--size", "320x180", "--pipeline", pipeline, "--dump-pipeline"])
            #expect(dump.stdout.contains("appsrc name=in ! h264parse ! matroskamux ! filesink location=\(out)"))
            #expect(dump.stdout.contains("x264enc name=encoder tune=zerolatency"))
        }

        /// gst-launch's rtspsrc and ffmpeg watch together; the GStreamer client writes the 30 frames it decoded.
        /// The verdict is what the viewer got, every frame and no error before the end, not gst-launch's exit status
        /// (`gstLaunchViewer` says why).
        @Test func aGStreamerClientPlaysTooAlongsideFFmpeg() throws {
            let dir = try TempDir()
            let (p, url) = try startLive([])
            let u = try #require(url)
            let frames = dir.file("gst.i420")
            let ff = try LiveProcess("/usr/bin/env", ["ffmpeg", "-v", "error", "-rtsp_transport", "udp", "-i", u,
                                                      "-frames:v", "30", "-f", "null", "-"])
            // identity's eos-after=N passes N-1 buffers and ends the stream on the Nth.
            let gst = try gstLaunchViewer(["rtspsrc", "location=\(u)", "latency=0", "protocols=tcp", "!", "rtph264depay",
                                           "!", "h264parse", "!", "avdec_h264", "!", "identity", "eos-after=31", "!",
                                           "videoconvert", "!", "video/x-raw,format=I420", "!", "filesink",
                                           "location=\(frames)"], timeout: 60)
            #expect(ff.waitForExit(timeout: 60) == 0, "\(ff.allOutput)")
            #expect(gst.played, "\(gst.output)")
            let size = try FileManager.default.attributesOfItem(atPath: frames)[.size] as? Int
            #expect(size == 30 * 640 * 360 * 3 / 2, "\(gst.output)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        /// A client that only asks for the description (a health check) and a viewer who pauses leave the media
        /// prepared but not playing: frames offered to it meanwhile go nowhere, and that is nobody's loss (since
        /// nobody watching costs nothing, few are: only until the PLAY a DESCRIBE waits for is given up). They are not
        /// counted as dropped (a soak would call them the machine's, and `framesDropped` would fire every second),
        /// nor as viewers (`status`, `{viewers}`), and a viewer after them plays and is counted while it plays.
        @Test func aHealthCheckAndAPausedViewerDropNoFramesAndAreNotCountedAsViewers() throws {
            let (p, url) = try startLive([])
            let u = try #require(url), c = try #require(controlURL(p))
            func rtsp() -> (frames: Int, dropped: Int)? {
                let outputs = statusJSON(c)["outputs"] as? [[String: Any]]
                return outputs?.first { $0["id"] as? String == "rtsp" }.map {
                    ($0["frames"] as? Int ?? 0, $0["dropped"] as? Int ?? -1)
                }
            }
            /// Waits until the run is 60 frames (two seconds) further than now.
            func ran60More() -> Bool {
                let from = statusJSON(c)["frame"] as? Int ?? 0
                return poll(until: { (statusJSON(c)["frame"] as? Int).map { $0 >= from + 60 } ?? false }, timeout: 20)
            }
            /// Waits until the status counts `n` viewers.
            func viewers(become n: Int) -> Bool {
                poll(until: { statusJSON(c)["viewers"] as? Int == n }, timeout: 20)
            }
            for mode in ["describe", "pause"] {
                let client = try LiveProcess("/usr/bin/python3", [fixture("rtsp_abuse.py"), mode, u])
                #expect(client.waitForLine(timeout: 20) { $0 == "described" || $0 == "paused" } != nil, "\(client.allOutput)")
                // Neither is watching: the health check never played (it was counted from its connection on), the
                // paused viewer stopped (its PAUSE is answered just before the server counts it).
                #expect(viewers(become: 0), "\(mode): \(statusJSON(c))")
                #expect(ran60More(), "\(mode): \(statusJSON(c))")
                #expect(rtsp()?.dropped == 0, "\(mode): \(statusJSON(c))")
                #expect(statusJSON(c)["viewers"] as? Int == 0, "\(mode): \(statusJSON(c))")
                client.signal(SIGKILL)
                _ = client.waitForExit()
            }
            // A viewer that plays is counted while it plays, and no more once it left.
            let viewer = try LiveProcess("/usr/bin/ffmpeg", ["-v", "error", "-rtsp_transport", "tcp", "-i", u,
                                                             "-frames:v", "150", "-f", "null", "-"])
            #expect(viewers(become: 1), "\(statusJSON(c))")
            #expect(viewer.waitForExit(timeout: 60) == 0, "\(viewer.allOutput)")
            #expect(viewers(become: 0), "\(statusJSON(c))")
            #expect(statusJSON(c)["dropped"] as? Int == 0, "\(statusJSON(c))")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
            #expect(p.stdout.contains { $0.hasPrefix("rtsp:") && $0.hasSuffix("dropped 0") }, "\(p.allOutput)")
        }

        @Test func aBurstOfViewersIsServedAndTheServerLives() throws {
            let (p, url) = try startLive([])
            let u = try #require(url)
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("bench/rtsp_burst.py").path
            // Twice: once to a server with no viewer yet, once right after the first burst left.
            for _ in 0..<2 {
                let r = try tool(["python3", script, u, "--viewers", "200", "--timeout", "20"], timeout: 90)
                #expect(r.status == 0, "\(r.err)")
                let json = try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any]
                let served = json?["served"] as? Int ?? 0, refused = json?["refused"] as? Int ?? 0
                #expect(served + refused == 200, "\(r.out)")
                #expect(served >= 190, "\(r.out)")
            }
            // Still serving.
            let probe = try tool(["ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-show_entries", "stream=width",
                                  "-of", "csv=p=0", u])
            #expect(probe.out.trimmingCharacters(in: .whitespacesAndNewlines) == "640")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        @Test func aPasswordKeepsStrangersOut() throws {
            let p = try LiveProcess(binary, ["run", "--no-control", "--size", "320x180", "--rtsp", "127.0.0.1:0/pip", "--rtsp-user", "alice"])
            #expect(p.waitForExit(timeout: 30) != 0, "a user without a password must be refused")
            let (live, url) = try startLive([panelScene, "--rtsp-user", "alice", "--rtsp-password", "s3cret"])
            let u = try #require(url)
            let port = try #require(URLComponents(string: u)?.port)
            // A viewer with the password watches while strangers try their luck.
            let watcher = try startWatcher("rtsp://alice:s3cret@127.0.0.1:\(port)/pip")
            let junk = try tool(["python3", fixture("rtsp_abuse.py"), "fuzz", u, "--count", "200", "--seed", "7"])
            #expect(junk.status == 0, "\(junk.err)")
            let setup = try tool(["python3", fixture("rtsp_abuse.py"), "setup", u, "/stream=0"])
            #expect(setup.out.contains("401"), "\(setup.out) \(setup.err)")
            let stranger = try tool(["ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-show_entries", "stream=width",
                                     "-of", "csv=p=0", u])
            #expect(stranger.status != 0 && stranger.err.contains("401"), "\(stranger.err)")
            let friend = try tool(["ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-show_entries", "stream=width",
                                   "-of", "csv=p=0", "rtsp://alice:s3cret@127.0.0.1:\(port)/pip"])
            #expect(friend.out.trimmingCharacters(in: .whitespacesAndNewlines) == "640", "\(friend.err)")
            let watched = try stopWatcher(watcher)
            #expect(watched.int("dropped") == 0 && watched.int("repeated") == 0 && watched.int("unreadable") == 0,
                    "\(watched.total)")
            #expect(watched.compared > 0 && watched.corrupt == 0, "\(watched.fidelity)")
            live.signal(SIGINT)
            #expect(live.waitForExit() == 0)
        }
    }
}
