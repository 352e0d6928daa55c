import Foundation
import Testing
import TestSupport

/// An nginx with the RTMP module on a free port, recording what is pushed to it; ended by its pid.
final class RTMPServer {
    let dir: TempDir
    let port: Int
    let process: LiveProcess

    /// With `hlsPort`, nginx also cuts what is pushed into HLS (1 s fragments) and serves it over HTTP there: the
    /// fan-out to many browsers the README describes, on one machine.
    let hlsPort: Int?

    /// With `pullFrom` (another nginx's RTMP port), this one is an edge: a viewer's play makes it pull the stream
    /// from that origin (nginx-rtmp's `pull`), so viewers spread over edges and the origin sends one copy to each.
    init(port: Int = freePort(), hlsPort: Int? = nil, pullFrom origin: Int? = nil) throws {
        self.port = port
        self.hlsPort = hlsPort
        let dir = try TempDir()
        self.dir = dir
        let conf = dir.file("nginx.conf")
        let pull = origin.map { "pull rtmp://127.0.0.1:\($0)/live;" } ?? ""
        let hls = hlsPort == nil ? "" : "hls on; hls_path \(dir.file("hls")); hls_fragment 1s; hls_playlist_length 6s;"
        let http = hlsPort.map { p in """
            http {
                access_log off;
                server {
                    listen 127.0.0.1:\(p);
                    location /hls/ {
                        alias \(dir.file("hls"))/;
                        types { application/vnd.apple.mpegurl m3u8; video/mp2t ts; }
                        add_header Cache-Control no-cache;
                    }
                }
            }
            """ } ?? ""
        try """
        load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
        daemon off;
        master_process off;
        pid \(dir.file("nginx.pid"));
        error_log \(dir.file("error.log")) info;
        events { worker_connections 64; }
        rtmp {
            server {
                listen 127.0.0.1:\(port);
                application live { live on; record all; record_path \(dir.path); record_unique off; \(hls) \(pull) }
            }
        }
        \(http)
        """.write(toFile: conf, atomically: true, encoding: .utf8)
        process = try LiveProcess("/usr/sbin/nginx", ["-c", conf, "-p", dir.path, "-e", dir.file("error.log")])
    }

    var url: String { "rtmp://127.0.0.1:\(port)/live/test" }
    var playlist: String? { hlsPort.map { "http://127.0.0.1:\($0)/hls/test.m3u8" } }
    var recording: String { dir.file("test.flv") }

    /// nginx says nothing on stdout when ready: wait until its port accepts a connection.
    func waitUntilListening(timeout: TimeInterval = 10) -> Bool {
        var listening = false
        poll(until: {
            listening = (try? tool(["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/\(port)"], timeout: 2))?.status == 0
            return listening || !process.process.isRunning
        }, timeout: timeout)
        return listening
    }

    func stop() {
        process.signal(SIGTERM)
        _ = process.waitForExit(timeout: 10)
    }
}

extension EndToEnd {
    @Suite(.serialized) struct PushTests {
        /// Past one machine: pipcompose pushes once to a relay (nginx-rtmp) that serves HLS to any number of
        /// viewers; a viewer of the relay's HLS reads pipcompose's strip in every picture.
        @Test func aRelayFansThePushOutAsHLSAndItsViewersSeeThePicture() throws {
            let dir = try TempDir()
            let relay = try RTMPServer(hlsPort: freePort())
            defer { relay.stop() }
            #expect(relay.waitUntilListening(), "\(relay.process.allOutput)")
            let (p, _) = try startLive([try timecodeScene(dir), "--push", relay.url], rtsp: false)
            let playlist = try #require(relay.playlist)
            // Four seconds pushed (a key frame a second): nginx has cut fragments and listed them.
            #expect(p.waitForFrames("push:\(relay.url)", atLeast: 120), "\(p.allOutput)")
            let (status, body) = http("GET", playlist)
            let listed = String(decoding: body, as: UTF8.self)
            #expect(status == 200 && listed.contains("#EXTINF"), "\(status) \(listed)\n\(p.allOutput)")
            let probe = try tool([binary, "probe", playlist, "--duration", "6", "--json", "--quiet"], timeout: 60)
            let json = (try? JSONSerialization.jsonObject(with: Data(probe.out.utf8))) as? [String: Any]
            let total = try #require(json?["total"] as? [String: Any], "\(probe.out)\n\(probe.err)")
            #expect((total["readable"] as? Int ?? 0) > 60 && total["unreadable"] as? Int == 0, "\(total)")
            let sizes = try tool(["ffprobe", "-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", playlist])
            #expect(sizes.out.contains("640,360"), "\(sizes.out) \(sizes.err)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// nginx-rtmp's origin/edge: pipcompose pushes once to the origin; a probe playing from an edge (another
        /// nginx that pulls from the origin when asked) reads every strip and sees the scene's picture.
        @Test func anEdgeThatPullsFromTheOriginServesThePicture() throws {
            let dir = try TempDir()
            let origin = try RTMPServer()
            defer { origin.stop() }
            let edge = try RTMPServer(pullFrom: origin.port)
            defer { edge.stop() }
            #expect(origin.waitUntilListening() && edge.waitUntilListening(), "\(origin.process.allOutput)\(edge.process.allOutput)")
            let scene = try timecodeScene(dir)
            // With sound, as such streams have: a silent stream played over RTMP gave GStreamer's reader (rtmp2src,
            // flvdemux) no frames at all here, while ffprobe read it; not looked into further.
            let (p, _) = try startLive([scene, "--push", origin.url, "--audio", "ticks"], rtsp: false)
            #expect(p.waitForFrames("push:\(origin.url)", atLeast: 30), "\(p.allOutput)")
            let viaEdge = "rtmp://127.0.0.1:\(edge.port)/live/test"
            let r = try probe([viaEdge, "--duration", "4", "--reference", scene], timeout: 60)
            let seen = try ProbeResult(json: r.out)
            #expect(r.status == 0 && seen.int("readable") > 60 && seen.int("unreadable") == 0 && seen.int("dropped") == 0,
                    "\(r.out)\n\(r.err)")
            #expect(seen.compared > 0 && seen.corrupt == 0, "\(seen.fidelity)")
            // The edge got it from the origin, not from pipcompose: one push, and the edge's own recording of what it relayed.
            #expect(p.stdout.filter { $0.hasPrefix("output push:") }.count == 1, "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            edge.stop()
            #expect((try decodedFrames(edge.recording) ?? 0) > 60, "the edge relayed nothing: \(edge.recording)")
        }

        @Test func pushesToAnRTMPServerThatComesUpLateAndTheRecordingIsUntouched() throws {
            let dir = try TempDir()
            let file = dir.file("local.ts")
            // Start pushing to a port with no server yet, and record locally.
            let port = freePort()
            let url = "rtmp://127.0.0.1:\(port)/live/test"
            // With sound 40 ms late on purpose: the server's copy must carry both tracks, that far apart.
            let scene = try timecodeScene(dir)
            let (p, _) = try startLive([scene, "--push", url, "--record", file, "--audio", "ticks",
                                        "--inject-av-offset-ms", "40"], rtsp: false)
            #expect(p.waitForLine(timeout: 20) { $0.contains("push:\(url): failed") && $0.contains("retrying") } != nil,
                    "\(p.allOutput)")
            // Now the server appears on that port.
            let rtmp = try RTMPServer(port: port)
            #expect(rtmp.waitUntilListening())
            #expect(p.waitForFrames("push:\(url)", atLeast: 150, timeout: 60), "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            rtmp.stop()
            let sizes = try frameSizes(rtmp.recording)
            #expect(sizes.count >= 120, "\(rtmp.recording): \(sizes.count) frames")
            #expect(Set(sizes) == ["640x360"])
            // FLV stamps in whole milliseconds: within 1.5 ms.
            let (av, _, out) = try probeAV([rtmp.recording])
            try expectAVOffset(try #require(av, "\(out)"), 40, "RTMP", atLeast: 3, tolerance: 1.5)
            #expect(try decodedFrames(file) == summaryFrames(p, "record:\(file)"))
            // Its summary says it failed before the server came, and not that it was waiting to retry at the end.
            let line = p.stdout.last { $0.hasPrefix("push:\(url): ") } ?? ""
            #expect(line.contains("; failed ") && line.contains("Connection refused") && !line.contains("waiting to retry"),
                    "\(p.allOutput)")
        }

        /// A push whose server is never there: the run goes on and ends as asked, and what it says of the push, in
        /// `status` and in the summary, is that it failed, how often and why, and that it was still waiting to
        /// retry at the end. Its frames and bytes alone (what it was handed) read as a push that worked.
        @Test func aPushThatNeverReachesItsServerSaysSoToTheEnd() throws {
            let dir = try TempDir()
            let url = "rtmp://127.0.0.1:\(freePort())/live/test"
            let (p, _) = try startLive([try timecodeScene(dir), "--push", url], rtsp: false)
            let control = try #require(controlURL(p), "\(p.allOutput)")
            #expect(p.waitForLines(count: 2) { $0.contains("push:\(url): failed") && $0.contains("retrying in") }, "\(p.allOutput)")
            let outputs = statusJSON(control)["outputs"] as? [[String: Any]] ?? []
            let push = try #require(outputs.first { $0["id"] as? String == "push:\(url)" }, "\(outputs)")
            #expect((push["failures"] as? Int ?? 0) >= 2 && (push["lastFailure"] as? String ?? "").contains("Connection refused"),
                    "\(push)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            let line = p.stdout.last { $0.hasPrefix("push:\(url): ") } ?? ""
            #expect(line.contains("waiting to retry when the run ended (not reaching its server)")
                    && line.contains("Connection refused"), "\(p.allOutput)")
        }

        @Test func pushesToAnSRTListener() throws {
            let dir = try TempDir()
            let port = freePort(udp: true)
            let received = dir.file("srt.ts")
            // A short probe: the stream is only a few seconds long.
            let listener = try LiveProcess("/usr/bin/env", ["ffmpeg", "-v", "error", "-analyzeduration", "1000000",
                                                            "-i", "srt://127.0.0.1:\(port)?mode=listener", "-c", "copy",
                                                            "-y", received])
            let (p, _) = try startLive([try timecodeScene(dir), "--push", "srt://127.0.0.1:\(port)", "--audio", "ticks",
                                        "--inject-av-offset-ms", "-40"], rtsp: false)
            #expect(p.waitForFrames("push:srt://127.0.0.1:\(port)", atLeast: 150), "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
            _ = listener.waitForExit(timeout: 20)
            #expect((try decodedFrames(received) ?? 0) >= 30, "\(listener.allOutput)")
            // What ffmpeg received over SRT has both tracks, the sound 40 ms early as sent.
            let (av, _, out) = try probeAV([received])
            try expectAVOffset(try #require(av, "\(out)"), -40, "SRT", atLeast: 2)
        }

        @Test func pushesToAnRTSPServerByRecord() throws {
            let dir = try TempDir()
            let port = freePort()
            let received = dir.file("record.mkv")
            // A gst-rtsp-server in RECORD mode that decodes what it receives and writes it to a file.
            let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fixtures/rtsp_record_server.py").path
            let server = try LiveProcess("/usr/bin/python3", [fixture, String(port), received])
            #expect(server.waitForLine(timeout: 20) { $0.hasPrefix("listening") } != nil, "\(server.allOutput)")
            let url = "rtsp://127.0.0.1:\(port)/live"
            let (p, _) = try startLive(["--push", url], rtsp: false)
            #expect(p.waitForFrames("push:\(url)", atLeast: 90), "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
            server.signal(SIGTERM)
            _ = server.waitForExit(timeout: 20)
            let frames = try decodedFrames(received) ?? 0
            #expect(frames >= 60, "the server wrote \(frames) frames: \(server.allOutput)")
        }
    }
}
