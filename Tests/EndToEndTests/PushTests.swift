import Foundation
import Testing
import TestSupport

/// An nginx with the RTMP module on a free port, recording what is pushed to it; ended by its pid.
final class RTMPServer {
    let dir: TempDir
    let port: Int
    let process: LiveProcess

    init(port: Int = freePort()) throws {
        self.port = port
        dir = try TempDir()
        let conf = dir.file("nginx.conf")
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
                application live { live on; record all; record_path \(dir.path); record_unique off; }
            }
        }
        """.write(toFile: conf, atomically: true, encoding: .utf8)
        process = try LiveProcess("/usr/sbin/nginx", ["-c", conf, "-p", dir.path, "-e", dir.file("error.log")])
    }

    var url: String { "rtmp://127.0.0.1:\(port)/live/test" }
    var recording: String { dir.file("test.flv") }

    /// nginx says nothing on stdout when ready: wait until its port accepts a connection.
    func waitUntilListening(timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (try? tool(["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/\(port)"], timeout: 2))?.status == 0 { return true }
            if !process.process.isRunning { return false }
        }
        return false
    }

    func stop() {
        process.signal(SIGTERM)
        _ = process.waitForExit(timeout: 10)
    }
}

extension EndToEnd {
    @Suite(.serialized) struct PushTests {
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
