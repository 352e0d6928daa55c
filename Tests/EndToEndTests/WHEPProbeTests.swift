import Foundation
import Testing
import TestSupport

/// The Python with aiortc, a WebRTC stack that is not ours (installed by scripts/setup.sh test).
let aiortcPython = "/opt/pipcompose-test-venv/bin/python"

/// aiortc's WHEP server relaying `rtsp` (Tests/Fixtures/aiortc_whep.py); returns it and its base URL.
func aiortcWHEP(rtsp: String, _ args: [String] = []) throws -> (LiveProcess, String) {
    let server = try LiveProcess(aiortcPython, [fixture("aiortc_whep.py"), "--rtsp", rtsp] + args)
    let line = try #require(server.waitForLine(timeout: 30) { $0.hasPrefix("listening ") }, "\(server.allOutput)")
    return (server, "http://127.0.0.1:\(line.dropFirst("listening ".count))")
}

/// The `total` of a probe's JSON report, and its p50 latency.
func probeTotal(_ p: LiveProcess) -> (total: [String: Any], p50: Double?) {
    let json = (try? JSONSerialization.jsonObject(with: Data(p.stdout.joined(separator: "\n").utf8))) as? [String: Any]
    let total = json?["total"] as? [String: Any] ?? [:]
    return (total, (total["latencyMs"] as? [String: Any])?["p50"] as? Double)
}

extension EndToEnd {
    @Suite(.serialized) struct WHEPProbeTests {
        /// `probe whep+http://` of pipcompose's own /v1/whep with a watch link's token: every frame, readable, with
        /// latency and the join time; the session is ended on the server when the probe stops.
        @Test func theProbeReadsPipcomposesOwnWHEPWithAWatchLinksToken() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let (p, _) = try startLive([scene, "--webrtc"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let link = try #require(pageURL(p).flatMap { URLComponents(string: $0)?.queryItems?.first { $0.name == "token" }?.value })
            let r = try LiveProcess(binary, ["probe", "whep+\(c)/v1/whep", "--duration", "4", "--json", "--quiet",
                                             "--reference", scene, "--max-corrupt", "0"],
                                    environment: ["PIPCOMPOSE_WHEP_TOKEN": link])
            #expect(r.waitForExit(timeout: 60) == 0, "\(r.allOutput)\n\(p.allOutput)")
            let (total, p50) = probeTotal(r)
            #expect((total["frames"] as? Int ?? 0) > 60, "\(total)")
            #expect(total["dropped"] as? Int == 0 && total["unreadable"] as? Int == 0 && total["repeated"] as? Int == 0, "\(total)")
            #expect(p50 != nil && (total["joinMs"] as? Double ?? 0) > 0, "\(total)")
            // Every picture is the scene's picture of its frame (what a WebRTC viewer saw, not only that frames came).
            let json = (try? JSONSerialization.jsonObject(with: Data(r.stdout.joined(separator: "\n").utf8))) as? [String: Any]
            let fidelity = (json?["fidelity"] as? [String: Any])?["total"] as? [String: Any] ?? [:]
            #expect((fidelity["compared"] as? Int ?? 0) > 30 && fidelity["corrupt"] as? Int == 0, "\(fidelity)")
            #expect(p.waitForLine(timeout: 15) { $0.contains("webrtc: viewer1 left: ended by the viewer") } != nil, "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        /// `--whep-trickle`: the offer goes out before ICE gathering and the candidates follow in PATCHes (RFC
        /// 8840). pipcompose's /v1/whep takes them (its session counts them); aiortc's server takes none (405), is
        /// sent no more, and finds the probe from its connectivity checks. Both give every frame.
        @Test func trickledCandidatesReachPipcomposeAndAServerThatTakesNoneIsLeftAlone() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let (p, url) = try startLive([scene, "--webrtc"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let r = try LiveProcess(binary, ["probe", "whep+\(c)/v1/whep", "--whep-trickle", "--duration", "4", "--json",
                                             "--quiet"], environment: ["PIPCOMPOSE_WHEP_TOKEN": try ownerToken(c)])
            #expect(r.waitForExit(timeout: 60) == 0, "\(r.allOutput)\n\(p.allOutput)")
            // Counted for the session's whole life, read once it has ended (a 4-second session is too brief to watch).
            let status = statusJSON(c)
            let trickled = (status["webrtc"] as? [String: Any])?["trickled"] as? Int ?? 0
            #expect(trickled >= 1, "\(status)\n\(r.allOutput)")
            let metrics = String(decoding: http("GET", c + "/metrics").1, as: UTF8.self)
            #expect(metrics.contains("pipcompose_webrtc_trickled_candidates_total \(trickled)\n"), "\(metrics)")
            let own = probeTotal(r).total
            #expect((own["frames"] as? Int ?? 0) > 60 && own["dropped"] as? Int == 0, "\(own)")

            let (server, base) = try aiortcWHEP(rtsp: try #require(url))
            defer { server.signal(SIGKILL) }
            let a = try LiveProcess(binary, ["probe", "whep+\(base)/whep", "--whep-trickle", "--duration", "4", "--json",
                                             "--quiet"])
            #expect(a.waitForExit(timeout: 60) == 0, "\(a.allOutput)\n\(server.allOutput)")
            let theirs = probeTotal(a).total
            #expect((theirs["frames"] as? Int ?? 0) > 60 && theirs["dropped"] as? Int == 0, "\(theirs)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        /// A viewer on a WebRTC stack that is not ours (aiortc, its own offer, its own decoder) of pipcompose's
        /// /v1/whep: every picture it decoded, written losslessly and probed against the scene, is the scene's
        /// picture of its frame, none missing.
        @Test func anAiortcViewerOfPipcomposeSeesTheScenesPictures() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let (p, _) = try startLive([scene, "--webrtc"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let seen = dir.file("seen.mkv")
            let viewer = try LiveProcess(aiortcPython, [fixture("aiortc_viewer.py"), "\(c)/v1/whep", "4", seen,
                                                        "--token", try ownerToken(c)])
            #expect(viewer.waitForExit(timeout: 60) == 0, "\(viewer.allOutput)")
            let said = (try? JSONSerialization.jsonObject(with: Data((viewer.stdout.last ?? "{}").utf8))) as? [String: Any] ?? [:]
            #expect(said["error"] == nil && said["codec"] as? String == "H264/90000", "\(said)\n\(viewer.allOutput)")
            #expect((said["frames"] as? Int ?? 0) > 90 && said["width"] as? Int == 640, "\(said)")
            let r = try probe([seen, "--reference", scene])
            #expect(r.status == 0, "\(r.err)")
            #expect(r.total["frames"] as? Int == said["frames"] as? Int, "\(r.total)")
            #expect(r.total["dropped"] as? Int == 0 && r.total["unreadable"] as? Int == 0 && r.total["repeated"] as? Int == 0, "\(r.total)")
            let json = (try? JSONSerialization.jsonObject(with: Data(r.out.utf8))) as? [String: Any]
            let fidelity = (json?["fidelity"] as? [String: Any])?["total"] as? [String: Any] ?? [:]
            #expect(fidelity["corrupt"] as? Int == 0 && (fidelity["compared"] as? Int ?? 0) > 90, "\(fidelity)")
            #expect(p.waitForLine(timeout: 15) { $0.contains("webrtc: viewer1 left: ended by the viewer") } != nil, "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        /// Through a WHEP server that is not ours (aiortc relaying pipcompose's RTSP): a probe through a relay that
        /// holds every datagram 40 ms reads what the relay really held (40 ms, more on a busy machine; the relay says)
        /// more than a probe beside it on the direct way (floor against floor, within 2 ms of what the relay held,
        /// from its least to its median: a busy machine raises some frames' latency, never every frame's, and the
        /// two ways' medians strayed 2.7 ms from the relay's median in a CI run); a path that loses every 40th packet
        /// shows damage, the clean ones none.
        @Test func throughAiortcADelayIsReadAndALossIsSeen() throws {
            let dir = try TempDir()
            let (p, url) = try startLive([try timecodeScene(dir)])
            let (server, base) = try aiortcWHEP(rtsp: try #require(url), ["--delay-ms", "40", "--drop-every", "40"])
            defer { server.signal(SIGKILL) }
            let probes = try ["whep", "whep/delayed", "whep/lossy"].map { path in
                try LiveProcess(binary, ["probe", "whep+\(base)/\(path)", "--duration", "6", "--json", "--quiet"])
            }
            for r in probes { #expect(r.waitForExit(timeout: 60) == 0, "\(r.allOutput)\n\(server.allOutput)") }
            let (direct, delayed, lossy) = (probeTotal(probes[0]), probeTotal(probes[1]), probeTotal(probes[2]))
            for clean in [direct.total, delayed.total] {
                #expect((clean["frames"] as? Int ?? 0) > 90, "\(clean)")
                #expect(clean["dropped"] as? Int == 0 && clean["unreadable"] as? Int == 0, "\(clean)")
            }
            // What the relay really held each datagram: 40 ms asked, longer when the machine is busy.
            let ended = try #require(server.waitForLine(timeout: 15) { $0.contains(" held ") }, "\(server.allOutput)")
            let held = try #require(ended.components(separatedBy: " held ").last?.split(separator: " ").first
                .flatMap { Double($0) }, "\(ended)")
            let least = try #require(ended.components(separatedBy: " least ").last?.split(separator: " ").first
                .flatMap { Double($0) }, "\(ended)")
            #expect(held >= 40 && least >= 40, "\(ended)")
            func floor(_ t: [String: Any]) -> Double? { (t["latencyMs"] as? [String: Any])?["min"] as? Double }
            let (directFloor, delayedFloor) = (try #require(floor(direct.total)), try #require(floor(delayed.total)))
            // The frame with the least latency on the delayed way had its datagrams held from the relay's least to
            // about its median (a loaded event loop holds most of them longer than asked: median 43.0 ms, least
            // 40.0, floors 42.6 ms apart, with six busy loops beside the test).
            let added = delayedFloor - directFloor
            #expect(added >= least - 2 && added <= held + 2,
                    "direct floor \(directFloor) (p50 \(direct.p50 ?? 0)), delayed \(delayedFloor) (p50 \(delayed.p50 ?? 0)); \(ended)")
            let damage = (lossy.total["dropped"] as? Int ?? 0) + (lossy.total["unreadable"] as? Int ?? 0)
            #expect((lossy.total["frames"] as? Int ?? 0) > 30 && damage > 0, "\(lossy.total)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        /// `soak --viewers-only whep+… --decode 1 --rotate-every 2`: four viewers account for frames without decoding
        /// them, and one at a time decodes too, in turn. From a clean stream every viewer has every frame, none stalls,
        /// and the ones whose turn came read latency and pictures the scene's; from a stream that leaves out every
        /// 10th frame each viewer counts a tenth of its span as dropped, to the frame, by timestamps.
        @Test func aWHEPSwarmAccountsForEveryFrameWithoutDecoding() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            for drops in [false, true] {
                let (p, _) = try startLive([scene, "--webrtc"] + (drops ? ["--inject-drops", "every:10"] : []))
                let c = try #require(controlURL(p), "\(p.allOutput)")
                let report = dir.file(drops ? "dropping" : "clean")
                let soak = try LiveProcess(binary, ["soak", "--viewers-only", "whep+\(c)/v1/whep", "--viewers", "4", "--decode", "1",
                                                    "--rotate-every", "2", "--duration", "8", "--reference", scene,
                                                    "--compare-every", "5", "--report", report],
                                           environment: ["PIPCOMPOSE_WHEP_TOKEN": try ownerToken(c)])
                #expect(soak.waitForExit(timeout: 90) == (drops ? 3 : 0), "\(soak.allOutput)")
                p.signal(SIGINT)
                #expect(p.waitForExit() == 0)
                let data = try #require(FileManager.default.contents(atPath: report + "/soak.json"), "\(soak.allOutput)")
                let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
                let viewers = try #require(json["viewers"] as? [[String: Any]])
                #expect(viewers.count == 4)
                // Their turns came at 0, 2, 4 and 6 s: each decoded for 2 s from the key frame it asked for.
                let sampled = viewers.filter { ($0["total"] as? [String: Any])?["latencyMs"] != nil }
                #expect(sampled.count >= 3, "\(viewers)")
                let compared = viewers.compactMap { ($0["fidelity"] as? [String: Any])?["compared"] as? Int }.reduce(0, +)
                let corrupt = viewers.compactMap { ($0["fidelity"] as? [String: Any])?["corrupt"] as? Int }.reduce(0, +)
                #expect(compared > 20 && corrupt == 0, "compared \(compared), corrupt \(corrupt)")
                for (j, v) in viewers.enumerated() {
                    let t = try #require(v["total"] as? [String: Any])
                    let (frames, dropped) = (t["frames"] as? Int ?? 0, t["dropped"] as? Int ?? -1)
                    #expect(frames > 120 && t["stalls"] as? Int == 0 && t["repeated"] as? Int == 0
                            && t["unreadable"] as? Int == 0 && v["error"] == nil, "viewer \(j): \(v)")
                    if drops {
                        #expect(abs(Double(dropped) - Double(frames + dropped) / 10) <= 1, "viewer \(j): \(frames) frames, \(dropped) dropped")
                    } else {
                        #expect(dropped == 0, "viewer \(j): \(t)")
                    }
                }
            }
        }

        /// `probe whep+… --av` of pipcompose's own WHEP with `--audio ticks`: the sound on the picture's seconds within
        /// 1 ms, as an RTSP probe of the same run reads it. Before, the probe did not follow webrtcbin's lining up of
        /// the tracks (offsets 0.8–1.8 s), and the WebRTC output's sender reports gave send times (the sound 52 ms late).
        @Test func theAVOffsetOverWHEPIsTheSourcesOwn() throws {
            let dir = try TempDir()
            let (p, url) = try startLive([try timecodeScene(dir), "--webrtc", "--audio", "ticks"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let link = try #require(pageURL(p).flatMap { URLComponents(string: $0)?.queryItems?.first { $0.name == "token" }?.value })
            // The tracks are lined up once sender reports came (several seconds): 24 s leave ticks after that.
            let whep = try LiveProcess(binary, ["probe", "whep+\(c)/v1/whep", "--av", "--duration", "24", "--json", "--quiet"],
                                       environment: ["PIPCOMPOSE_WHEP_TOKEN": link])
            let rtsp = try probeAV([try #require(url), "--duration", "24"])
            #expect(whep.waitForExit(timeout: 90) == 0, "\(whep.allOutput)")
            let json = (try? JSONSerialization.jsonObject(with: Data(whep.stdout.joined(separator: "\n").utf8))) as? [String: Any]
            let av = try #require(json?["av"] as? [String: Any], "\(whep.allOutput)")
            try expectAVOffset(av, 0, "WHEP", atLeast: 3)
            try expectAVOffset(try #require(rtsp.av, "\(rtsp.out)"), 0, "RTSP beside it", atLeast: 3)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        /// What a WHEP server says instead of an answer is what the probe says, and ICE that never connects ends
        /// with the candidates both sides offered.
        @Test func badWHEPServersAreNamed() throws {
            let dir = try TempDir()
            let (p, url) = try startLive([try timecodeScene(dir)])
            let (server, base) = try aiortcWHEP(rtsp: try #require(url), ["--token", "right"])
            defer { server.signal(SIGKILL) }
            let wrong = try tool([binary, "probe", "whep+\(base)/whep", "--whep-token", "wrong", "--duration", "2"])
            #expect(wrong.status == 1 && wrong.err.contains("answered 401: wrong token") && wrong.err.contains("--whep-token"), "\(wrong.err)")
            let junk = try tool([binary, "probe", "whep+\(base)/whep/junk", "--whep-token", "right", "--duration", "2"])
            #expect(junk.status == 1 && junk.err.contains("answered 201 with text/html, not an SDP answer"), "\(junk.err)")
            let deaf = try tool([binary, "probe", "whep+\(base)/whep/deaf", "--whep-token", "right", "--timeout", "4"])
            #expect(deaf.status == 1 && deaf.err.contains("no frame from") && deaf.err.contains("ICE ")
                    && deaf.err.contains("ours: host") && deaf.err.contains("theirs: host"), "\(deaf.err)")
            let down = try tool([binary, "probe", "whep+http://127.0.0.1:\(freePort())/whep", "--duration", "2"])
            #expect(down.status == 1 && down.err.contains("cannot reach the WHEP server"), "\(down.err)")
            // A server that stops sending: the probe says so after --timeout, with its figures, and exits 3.
            let watching = try LiveProcess(binary, ["probe", "whep+\(base)/whep", "--whep-token", "right", "--timeout", "3",
                                                    "--duration", "120"])
            #expect(watching.waitForLine(timeout: 30) { $0.contains(" fps ") } != nil, "\(watching.allOutput)")
            server.signal(SIGKILL)
            #expect(watching.waitForExit(timeout: 30) == 3, "\(watching.allOutput)")
            #expect(watching.stdout.contains { $0.contains("FAILED: the stream stopped: no frame for 3 s") }, "\(watching.allOutput)")
            let misplaced = try tool([binary, "probe", try #require(url), "--whep-token", "x"])
            #expect(misplaced.status != 0 && misplaced.err.contains("for a WHEP source"), "\(misplaced.err)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }
    }
}
