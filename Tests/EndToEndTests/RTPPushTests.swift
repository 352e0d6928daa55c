import Foundation
import Testing
import TestSupport

let deployFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("deploy").path

/// The SDP a receiver of `run --push rtp://127.0.0.1:VIDEO?audio=AUDIO` reads: the shipped one
/// (deploy/janus/pipcompose.sdp, ports 5004 and 5006) with the test's ports.
func rtpSDP(_ dir: TempDir, _ name: String, video: Int, audio: Int) throws -> String {
    let shipped = try String(contentsOfFile: deployFolder + "/janus/pipcompose.sdp", encoding: .utf8)
    let text = shipped.replacingOccurrences(of: "m=video 5004 ", with: "m=video \(video) ")
        .replacingOccurrences(of: "m=audio 5006 ", with: "m=audio \(audio) ")
    #expect(text.contains("m=video \(video) ") && text.contains("m=audio \(audio) "), "\(shipped)")
    return try dir.write(name, text)
}

extension EndToEnd {
    @Suite(.serialized) struct RTPPushTests {
        /// `--push rtp://` twice: one encode sent to two receivers that come up late (nobody listens for the first
        /// seconds, which is no failure over UDP). ffmpeg and GStreamer, reading the shipped SDP, join mid-stream and
        /// show only right pictures (SPS/PPS come with every key frame), the profile browsers decode, and the sound.
        @Test func oneEncodeReachesReceiversThatComeLateAndEveryPictureTheyShowIsRight() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let (va, aa, vb, ab) = (freeRTPPorts(), freeRTPPorts(), freeRTPPorts(), freeRTPPorts())
            let a = "rtp://127.0.0.1:\(va)?audio=\(aa)", b = "rtp://127.0.0.1:\(vb)?audio=\(ab)"
            let (p, _) = try startLive([scene, "--push", a, "--push", b, "--audio", "ticks"], rtsp: false)
            #expect(p.waitForFrames("push:\(a)", atLeast: 45) && p.waitForFrames("push:\(b)", atLeast: 45), "\(p.allOutput)")
            let sdpA = try rtpSDP(dir, "a.sdp", video: va, audio: aa), sdpB = try rtpSDP(dir, "b.sdp", video: vb, audio: ab)
            // ffmpeg, the client most people use, decodes what it receives (lossless, to read it back).
            let file = dir.file("b.mkv")
            let ffmpeg = try LiveProcess("/usr/bin/env", ["ffmpeg", "-hide_banner", "-v", "warning", "-protocol_whitelist",
                                                          "file,udp,rtp", "-i", sdpB, "-frames:v", "90", "-c:v", "ffv1",
                                                          "-c:a", "pcm_s16le", "-y", file])
            // GStreamer, through the probe: every strip, every picture against the scene, the sound's ticks.
            let live = try probe([sdpA, "--duration", "4", "--reference", scene, "--av", "--jitter-buffer-ms", "100"])
            let gst = try ProbeResult(json: live.out)
            #expect(live.status == 0 && gst.int("frames") > 90 && gst.int("unreadable") == 0 && gst.int("dropped") == 0,
                    "\(live.out)\n\(live.err)")
            #expect(gst.compared > 0 && gst.corrupt == 0 && gst.ssimMin > 0.95, "\(gst.fidelity)")
            let av = (try? JSONSerialization.jsonObject(with: Data(live.out.utf8)) as? [String: Any])?["av"] as? [String: Any]
            // Ticks heard, those before the receiver lined the tracks up included: over plain RTP that waits for the
            // first sender report, which can come 5 s or more after joining (a CI run placed 1 tick, 3 before it).
            let heard = (av?["ticks"] as? Int ?? 0) + (av?["beforeAlignment"] as? Int ?? 0)
            #expect(heard >= 3 && (av?["heardSeconds"] as? Double ?? 0) >= 3, "the probe heard too few ticks: \(live.out)")
            #expect(ffmpeg.waitForExit(timeout: 60) == 0, "\(ffmpeg.allOutput)")
            #expect(!ffmpeg.allOutput.contains("error while decoding"), "\(ffmpeg.allOutput)")
            let seen = try tool([binary, "probe", file, "--reference", scene, "--json", "--quiet"])
            let ff = try ProbeResult(json: seen.out)
            #expect(ff.int("frames") == 90 && ff.int("unreadable") == 0 && ff.int("dropped") == 0, "\(ff.total)")
            #expect(ff.compared == 90 && ff.corrupt == 0 && ff.ssimMin > 0.95, "\(ff.fidelity)")
            let streams = try tool(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,profile", "-of", "csv=p=0",
                                    "-protocol_whitelist", "file,udp,rtp", sdpB], timeout: 30)
            #expect(streams.out.contains("h264,Constrained Baseline") && streams.out.contains("opus"),
                    "\(streams.out) \(streams.err)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            // Both pushes carried every frame; neither dropped one.
            for url in [a, b] {
                let line = p.stdout.last { $0.hasPrefix("push:\(url):") } ?? ""
                #expect(line.contains("dropped 0") && (LiveProcess.frames(in: line) ?? 0) > 150, "\(line)")
            }
        }

        /// Over the control API: a push with sound on a run that encodes no Opus is refused (422), one to another's
        /// ports too (409), and one the run can carry starts and reaches its receiver.
        @Test func pushesStartedOverTheAPIAreCheckedAgainstWhatTheRunMakes() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let (p, _) = try startLive([scene, "--audio", "ticks"], rtsp: false)
            let c = try #require(controlURL(p))
            let video = freeRTPPorts(), audio = freeRTPPorts()
            let noOpus = try ctl(c, ["push", "start", "rtp://127.0.0.1:\(video)?audio=\(audio)"])
            #expect(noOpus.status != 0 && noOpus.stderr.contains("422") && noOpus.stderr.contains("encodes no Opus"),
                    "\(noOpus.stdout) \(noOpus.stderr)")
            let url = "rtp://127.0.0.1:\(video)"
            let started = try ctl(c, ["push", "start", url])
            #expect(started.status == 0, "\(started.stderr)")
            // Its RTCP port is the next one up: a push there would mix into the first's receiver.
            let clash = try ctl(c, ["push", "start", "rtp://127.0.0.1:\(video + 1)"])
            #expect(clash.status != 0 && clash.stderr.contains("409") && clash.stderr.contains("give it other ports"),
                    "\(clash.stdout) \(clash.stderr)")
            let sdp = try rtpSDP(dir, "v.sdp", video: video, audio: audio)
            let seen = try probe([sdp, "--duration", "3", "--reference", scene])
            let r = try ProbeResult(json: seen.out)
            #expect(seen.status == 0 && r.int("readable") > 60 && r.corrupt == 0, "\(seen.out)\n\(seen.err)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// What an RTP push cannot be is refused before anything starts, saying what to do.
        @Test func refusesPushesThatWouldMixStreamsOrCarryWhatTheRunHasNot() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let cases: [([String], String)] = [
                (["--audio", "ticks", "--push", "rtp://127.0.0.1:5004?audio=5006", "--push", "rtp://127.0.0.1:5006"],
                 "give each push its own ports"),
                (["--push", "rtp://127.0.0.1:5004?audio=5006"], "the stream has none"),
                (["--push", "rtp://127.0.0.1:5004?audio=5004"], "must differ from the video port"),
                (["--push", "rtp://127.0.0.1"], "needs the video port"),
            ]
            for (args, why) in cases {
                let r = try tool([binary, "run", scene, "--control", "127.0.0.1:0", "--duration", "1"] + args, timeout: 30)
                #expect(r.status != 0 && r.err.contains(why), "\(args): \(r.status) \(r.err)")
            }
        }
    }
}
