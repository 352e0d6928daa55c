import Compositor
import Foundation
import Testing
import TestSupport

extension EndToEnd {
    @Suite(.serialized) struct HLSTests {
        /// `--hls DIR` with a rendition: the master names both rungs with the bandwidth their segments really took,
        /// every playlist follows RFC 8216 (Debian's m3u8 parser and the rules it leaves out), the folder keeps its
        /// window; GStreamer's hlsdemux reads the live ladder while it runs, and after the end ffmpeg and
        /// GStreamer read every rung: each its own size's layout, strip and sound.
        @Test func aLadderIsWrittenAsTheSpecSaysAndPlays() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let hls = dir.file("ladder")
            let (p, _) = try startLive([scene, "--rendition", "320x180", "--audio", "ticks", "--hls", hls, "--hls-window", "4"])
            #expect(p.stdout.contains { $0 == "output hls:\(hls)/main" } && p.stdout.contains { $0 == "output hls:\(hls)/320x180" },
                    "\(p.allOutput)")
            // Live: once the small rung has three segments, hlsdemux plays the master as a live stream. (Five
            // seconds of frames taken by its pipeline; the files follow as hlssink2 closes them, polled.)
            #expect(p.waitForFrames("hls:\(hls)/320x180", atLeast: 150), "\(p.allOutput)")
            var segments: [String] = []
            poll(until: {
                segments = ((try? FileManager.default.contentsOfDirectory(atPath: hls + "/320x180")) ?? []).filter { $0.hasSuffix(".ts") }
                return segments.count >= 3
            }, timeout: 30)
            #expect(segments.count >= 3, "\(segments)")
            let live = try probe([hls + "/master.m3u8", "--duration", "3", "--reference", scene])
            let seen = try ProbeResult(json: live.out)
            #expect(live.status == 0 && seen.int("frames") >= 60 && seen.unreadable == 0 && seen.corrupt == 0,
                    "\(live.out)\n\(live.err)")
            // The control port serves the folder to players, the token in the path; hlsdemux over HTTP reads it.
            let served = try #require(p.stdout.first { $0.hasPrefix("hls \(hls)/master.m3u8; players: http") }, "\(p.allOutput)")
                .components(separatedBy: "players: ").last!
            let overHTTP = try probe([served, "--duration", "3", "--reference", scene])
            let seenOverHTTP = try ProbeResult(json: overHTTP.out)
            #expect(overHTTP.status == 0 && seenOverHTTP.int("frames") >= 60 && seenOverHTTP.unreadable == 0
                    && seenOverHTTP.corrupt == 0, "\(overHTTP.out)\n\(overHTTP.err)")
            let base = served.replacingOccurrences(of: "/master.m3u8", with: "")
            let token = base.components(separatedBy: "/hls/").last!
            let control = base.components(separatedBy: "/hls/").first!
            let master = http("GET", served, anonymous: true)
            #expect(master.0 == 200 && String(decoding: master.1, as: UTF8.self).hasPrefix("#EXTM3U"), "\(master.0)")
            // Only the owner, only the ladder's files.
            #expect(http("GET", control + "/hls/\(token.dropLast())x/master.m3u8", anonymous: true).0 == 401)
            #expect(http("GET", control + "/hls/master.m3u8", anonymous: true).0 == 401)
            _ = try dir.write("ladder/secret.txt", "not a segment")
            // (The client folds `main/../..` away before sending: that one arrives as /hls/timecode.yaml, no token.)
            for (path, status) in [("secret.txt", 404), ("..%2Ftimecode.yaml", 404), ("%2E%2E/timecode.yaml", 404),
                                   ("main/../../timecode.yaml", 401), ("nothing.ts", 404)] {
                let r = http("GET", "\(base)/\(path)", anonymous: true)
                #expect(r.0 == status, "\(path): \(r.0) \(String(decoding: r.1, as: UTF8.self))")
            }
            // Past the window: the folder holds no more than it should.
            #expect(p.waitForFrames("hls:\(hls)/320x180", atLeast: 240), "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")

            let check = try tool(["/usr/bin/python3", fixture("hls_check.py"), hls, "4", "ended"])
            #expect(check.status == 0, "\(check.err)")
            let report = try #require(try? JSONSerialization.jsonObject(with: Data(check.out.utf8)) as? [String: Any], "\(check.out)")
            #expect((report["problems"] as? [String]) == [], "\(report)")
            let variants = try #require(report["variants"] as? [[String: Any]])
            #expect(variants.map { $0["uri"] as? String } == ["main/index.m3u8", "320x180/index.m3u8"])
            #expect(variants.map { $0["resolution"] as? [Int] } == [[640, 360], [320, 180]])
            for v in variants {
                // Constrained baseline as x264's ultrafast makes it, and AAC.
                #expect((v["codecs"] as? String)?.hasPrefix("avc1.42C0") == true && (v["codecs"] as? String)?.hasSuffix(",mp4a.40.2") == true, "\(v)")
                #expect(v["frameRate"] as? Double == 30 && v["segments"] as? Int == 4, "\(v)")
            }

            // ffmpeg sees the two rungs in the master; each rung read by ffmpeg and by GStreamer has its own layout.
            let streams = try tool(["ffprobe", "-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0",
                                    hls + "/master.m3u8"])
            #expect(Set(streams.out.split(separator: "\n").map(String.init).filter { !$0.isEmpty }) == ["640,360", "320,180"],
                    "\(streams.out)\(streams.err)")
            for rung in ["main", "320x180"] {
                let decoded = dir.file("ff-\(rung).mkv")
                let ff = try tool(["ffmpeg", "-hide_banner", "-v", "error", "-i", hls + "/\(rung)/index.m3u8", "-map", "0:v",
                                   "-c:v", "ffv1", "-y", decoded], timeout: 90)
                #expect(ff.status == 0 && ff.err.isEmpty, "\(rung): \(ff.err)")
                let read = try probe([decoded, "--reference", scene])
                let byFFmpeg = try ProbeResult(json: read.out)
                #expect(byFFmpeg.int("frames") >= 90 && byFFmpeg.unreadable == 0 && byFFmpeg.corrupt == 0
                        && byFFmpeg.compared == byFFmpeg.int("frames"), "\(rung): \(byFFmpeg.total) \(byFFmpeg.fidelity)")
                let g = try probe([hls + "/\(rung)/index.m3u8", "--reference", scene, "--av"])
                let gst = try ProbeResult(json: g.out)
                #expect(g.status == 0 && gst.int("frames") == byFFmpeg.int("frames") && gst.unreadable == 0 && gst.corrupt == 0,
                        "\(rung): \(g.out)")
                let av = (try? JSONSerialization.jsonObject(with: Data(g.out.utf8)) as? [String: Any])?["av"] as? [String: Any]
                #expect((av?["ticks"] as? Int ?? 0) >= 3, "\(rung): no sound: \(av ?? [:])")
            }
        }

        /// An adaptive player (GStreamer's hlsdemux2, as uridecodebin3 picks it for the probe) behind a relay whose
        /// bandwidth drops below the main rung's for a while and comes back: it moves down to the small rung and back
        /// up, and every frame it decodes reads, matches the scene at its own size, and none is lost.
        @Test func anAdaptivePlayerBehindASlowLinkMovesDownTheLadderAndBack() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let hls = dir.file("ladder")
            // The main rung peaks near 540 kbit/s here, the small one near 220: a 350 kbit/s link carries only the latter.
            let (p, _) = try startLive([scene, "--rendition", "320x180@150", "--hls", hls])
            let served = try #require(p.waitForLine { $0.hasPrefix("hls \(hls)/master.m3u8; players: http") }, "\(p.allOutput)")
                .components(separatedBy: "players: ").last!
            #expect(p.waitForFrames("hls:\(hls)/320x180", atLeast: 90), "\(p.allOutput)")
            let relay = try LiveProcess("/usr/bin/python3", [fixture("hls_relay.py"), served.replacingOccurrences(of: "master.m3u8", with: ""),
                                                             "--schedule", "fast:8,slow:14,fast:600", "--slow-kbps", "350"])
            let relayURL = try #require(relay.waitForLine { $0.hasPrefix("relay http") }, "\(relay.allOutput)")
                .components(separatedBy: " ").last!
            let r = try probe([relayURL + "master.m3u8", "--duration", "36", "--reference", scene], timeout: 120)
            let seen = try ProbeResult(json: r.out)
            #expect(r.status == 0, "\(r.out)\n\(r.err)")
            #expect(seen.total["sizes"] as? [String] == ["640x360", "320x180"] && seen.int("resolutionChanges") == 2,
                    "down and back up: \(seen.total)\n\(relay.allOutput)")
            #expect(seen.int("frames") >= 900 && seen.int("dropped") == 0 && seen.int("decodeErrors") == 0
                    && seen.unreadable == 0 && seen.corrupt == 0, "\(seen.total) \(seen.fidelity)")
            // The relay saw it: the small rung's segments from the time the link slowed (none before), and the main
            // rung's again at the end.
            let segments = relay.stdout.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .filter { ($0["path"] as? String ?? "").contains("/segment") }
            let firstSlow = segments.firstIndex { $0["phase"] as? String == "slow" } ?? segments.count
            let small = segments.indices.filter { (segments[$0]["path"] as? String ?? "").hasPrefix("/320x180/") }
            #expect(!small.isEmpty && small.allSatisfy { $0 >= firstSlow }, "\(relay.allOutput)")
            #expect((segments.last?["path"] as? String ?? "").hasPrefix("/main/"), "\(relay.allOutput)")
            relay.signal(SIGTERM)
            _ = relay.waitForExit()
            p.signal(SIGINT)
            #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")
        }

        /// A rung whose writes fail (a file size limit, as a full disk fails them: 100 KB, which the info panel's 1 s
        /// segments at 640x360 and 2 Mbit/s pass, 150-220 KB here, and the 320x180 rung's, about 45 KB, do not) fails
        /// alone: the small rung's playlist goes on to its end.
        @Test func aRungThatCannotWriteFailsAlone() throws {
            let dir = try TempDir()
            let scene = panelScene
            let hls = dir.file("ladder")
            let p = try LiveProcess("/bin/sh", ["-c", "ulimit -f 200; trap '' XFSZ; exec \"$0\" \"$@\"", binary,
                                                "run", scene, "--no-control", "--size", "640x360", "--bitrate", "2000",
                                                "--rendition", "320x180", "--duration", "5", "--rtsp", "127.0.0.1:0/pip",
                                                "--hls", hls])
            #expect(p.waitForExit(timeout: 60) == 0, "\(p.allOutput)")
            #expect(p.allOutput.contains("hls:\(hls)/main: failed"), "\(p.allOutput)")
            #expect(!p.allOutput.contains("hls:\(hls)/320x180: failed"), "\(p.allOutput)")
            let small = try String(contentsOfFile: hls + "/320x180/index.m3u8", encoding: .utf8)
            let (_, segments) = HLSPlaylist.media(small)
            #expect(segments.count >= 3 && small.contains("#EXT-X-ENDLIST"), "\(small)")
            // Every frame of it plays, its strip reads, and each picture is the scene's at that size.
            let r = try probe([hls + "/320x180/index.m3u8", "--reference", scene])
            let seen = try ProbeResult(json: r.out)
            #expect(r.status == 0 && seen.int("frames") >= 90 && seen.int("unreadable") == 0 && seen.int("dropped") == 0, "\(r.status) \(seen.total)")
            #expect(seen.corrupt == 0, "\(seen.fidelity)")
        }

        /// A slow disk under one rung (every write to its folder 200 ms late, from a preloaded library, for as long as
        /// a flag file exists): that rung's output drops frames, bounded, and the other rung and the stream lose
        /// none; once the disk is fast again the rung writes segments again, and both playlists end properly.
        @Test func aSlowDiskUnderOneRungLosesFramesOfThatRungOnly() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let hls = dir.file("ladder")
            let library = dir.file("slow_writes.so")
            let cc = try tool(["clang", "-shared", "-fPIC", "-o", library, fixture("slow_writes.c"), "-ldl"])
            #expect(cc.status == 0, "\(cc.err)")
            let flag = try dir.write("disk-is-slow", "")
            let (p, _) = try startLive([scene, "--rendition", "320x180", "--hls", hls],
                                       environment: ["LD_PRELOAD": library, "SLOW_WRITES_MATCH": "/320x180/",
                                                     "SLOW_WRITES_WHILE": flag, "SLOW_WRITES_MS": "200"])
            // The slow rung's output drops frames; the main rung's none.
            let slow = p.waitForLine { $0.contains("hls:\(hls)/320x180: running") && !$0.hasSuffix("dropped 0") }
            #expect(slow != nil, "\(p.allOutput)")
            #expect(p.stdout.filter { $0.contains("hls:\(hls)/main: running") }.allSatisfy { $0.hasSuffix("dropped 0") }, "\(p.allOutput)")
            // The disk is fast again: the rung writes segments again.
            func segments() -> Int {
                ((try? FileManager.default.contentsOfDirectory(atPath: hls + "/320x180")) ?? [])
                    .filter { $0.hasSuffix(".ts") }.count
            }
            let before = segments()
            try FileManager.default.removeItem(atPath: flag)
            var after = before
            poll(until: { after = segments(); return after >= before + 3 }, timeout: 30)
            #expect(after >= before + 3, "segments \(before) → \(after)")
            p.signal(SIGINT)
            #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")
            #expect(summaryFrames(p, "hls:\(hls)/main") != nil && p.stdout.contains { $0.hasPrefix("hls:\(hls)/main:") && $0.hasSuffix("dropped 0") },
                    "\(p.allOutput)")
            // The main rung: every frame, each readable; the slow one ends properly and plays what it kept.
            let main = try ProbeResult(json: try probe([hls + "/main/index.m3u8", "--reference", scene]).out)
            #expect(main.int("frames") >= 120 && main.int("dropped") == 0 && main.unreadable == 0 && main.corrupt == 0, "\(main.total)")
            let small = try String(contentsOfFile: hls + "/320x180/index.m3u8", encoding: .utf8)
            #expect(small.contains("#EXT-X-ENDLIST"), "\(small)")
            let kept = try ProbeResult(json: try probe([hls + "/320x180/index.m3u8", "--reference", scene]).out)
            #expect(kept.int("frames") >= 60 && kept.unreadable == 0 && kept.corrupt == 0, "\(kept.total)")
        }

        /// A folder that is not empty, a file, a missing parent, or a window out of range: refused before anything
        /// starts, with the rule, and nothing written.
        @Test func badLadderFoldersAreRefusedAndNothingIsWritten() throws {
            let dir = try TempDir()
            let scene = try timecodeScene(dir)
            let full = dir.file("full")
            try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
            let mine = try dir.write("full/mine.txt", "keep me")
            let file = try dir.write("plain.txt", "a file")
            let cases: [([String], String)] = [
                (["--hls", full], "not empty"),
                (["--hls", file], "that is a file"),
                (["--hls", dir.file("no/such/ladder")], "does not exist"),
                (["--hls", dir.file("new"), "--hls-window", "1"], "--hls-window"),
            ]
            for (args, words) in cases {
                let r = try tool([binary, "run", scene, "--duration", "1", "--no-control", "--rtsp", "127.0.0.1:0/pip"] + args)
                #expect(r.status != 0 && r.err.contains(words), "\(args): \(r.err)")
            }
            #expect(try String(contentsOfFile: mine, encoding: .utf8) == "keep me")
            #expect(try FileManager.default.contentsOfDirectory(atPath: full) == ["mine.txt"])
            #expect(!FileManager.default.fileExists(atPath: dir.file("new")))
        }
    }
}
