import Compositor
import Foundation
import Testing
import TestSupport

/// The browser's Picture-in-Picture window as a viewer has it (`Tests/Fixtures/pip_window.py`: headless Chromium on
/// the live page), read with the owner's token; what it printed, as JSON.
private func pipWindow(_ page: String, _ control: String, _ args: [String], timeout: TimeInterval = 150) throws
    -> [String: Any] {
    let r = try LiveProcess("/usr/bin/python3", [fixture("pip_window.py"), page, "--status-token", try ownerToken(control)]
                                                + args)
    #expect(r.waitForExit(timeout: timeout) == 0, "\(r.allOutput)")
    let line = r.stdout.last { $0.hasPrefix("{") } ?? "{}"
    return (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? ["output": r.allOutput]
}

/// A finite scene with the strip and a now-playing card whose cover is a 160x90 PNG.
private func cardScene(_ dir: TempDir) throws -> String {
    let cover = dir.file("cover.png")
    let made = try tool(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=orange:s=160x90", "-frames:v", "1", cover])
    #expect(made.status == 0, "\(made.err)")
    return try dir.write("card.yaml", """
    size: 640x360
    fps: 30
    background: "#101820"
    timeline: {duration: 600}
    widgets:
      - {id: strip, type: timecode, place: {edge: top, size: 0.08}}
      - {id: card, type: nowplaying, title: "Clair de lune", artist: "Claude Debussy", album: "Suite bergamasque",
         artwork: \(cover), place: fill}
    """)
}

private func dict(_ value: Any?) -> [String: Any] { value as? [String: Any] ?? [:] }

/// The handlers a page invoked, by name.
private func acts(_ seen: [String: Any]) -> [String: [String: Any]] {
    Dictionary((seen["acts"] as? [[String: Any]] ?? []).map { ($0["action"] as? String ?? "", $0) }) { a, _ in a }
}

extension EndToEnd {
    /// Issue 50: the PiP window's controls and metadata (Media Session), and a pop-out of the video with its controls
    /// (Document Picture-in-Picture).
    @Suite(.serialized) struct PiPWindowTests {
        /// The owner's page tells the browser what plays (the card's title, artist, album and cover, which the
        /// browser fetches as a 512-pixel PNG) and where the finite scene stands; its buttons are the run's verbs:
        /// pause and play change the run and the buttons' state, ±15 s move the scene, and there is no music to skip
        /// in, so previous/next are not offered. A new title on the card reaches the metadata. A watch link's page
        /// shows the same, and its buttons act on its own player only: pause stops its video, never the run.
        @Test func theBrowsersPiPWindowShowsWhatPlaysAndItsButtonsDriveTheRunOrOnlyTheWatchersPlayer() throws {
            let dir = try TempDir()
            let (p, _) = try startLive([try cardScene(dir), "--webrtc"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let owner = try pipWindow(try ownerPageURL(p), c, ["--media", "--title", "card=Reverie", "--act", "pause",
                                                               "--act", "play", "--act", "seekforward",
                                                               "--act", "seekbackward", "--act", "nexttrack"])
            #expect(owner["error"] == nil && owner["pageError"] as? String == "", "\(owner)\n\(p.allOutput)")
            let media = dict(owner["media"]), browser = dict(media["browser"])
            #expect(browser["title"] as? String == "Clair de lune" && browser["artist"] as? String == "Claude Debussy"
                    && browser["album"] as? String == "Suite bergamasque" && browser["playbackState"] as? String == "playing",
                    "\(media)")
            #expect((browser["artwork"] as? [String])?.first?.contains("/v1/nowplaying/artwork?v=") == true, "\(browser)")
            let artwork = dict(owner["artwork"])
            #expect(artwork["status"] as? Int == 200 && artwork["type"] as? String == "image/png"
                    && artwork["size"] as? [Int] == [512, 288], "\(artwork)")
            #expect(media["offered"] as? [String] == ["play", "pause", "seekbackward", "seekforward", "enterpictureinpicture"],
                    "\(media)")
            #expect(dict(media["position"])["duration"] as? String == "600" && dict(media["position"])["live"] as? Bool == false,
                    "\(media)")
            #expect(owner["titleFollowed"] as? Bool == true, "\(owner)")
            let did = acts(owner)
            for (name, state) in [("pause", "paused"), ("play", "playing")] {
                let a = did[name] ?? [:]
                #expect(a["handled"] as? Bool == true && a["error"] == nil && dict(a["run"])["state"] as? String == state
                        && a["pageState"] as? String == state && a["videoPaused"] as? Bool == false, "\(name): \(a)")
            }
            for (name, by) in [("seekforward", 15.0), ("seekbackward", -15.0)] {
                let a = did[name] ?? [:]
                let moved = (dict(a["run"])["sceneTime"] as? Double ?? 0) - (dict(a["before"])["sceneTime"] as? Double ?? 0)
                #expect(a["handled"] as? Bool == true && a["error"] == nil && abs(moved - by) < 3, "\(name): \(a)")
            }
            #expect(did["nexttrack"]?["handled"] as? Bool == false, "\(owner)")

            // A watch link: the same metadata and cover; play and pause only, on its own player.
            let page = try #require(pageURL(p), "\(p.allOutput)")
            let watcher = try pipWindow(page, c, ["--media", "--act", "pause", "--act", "play", "--act", "seekforward"])
            #expect(watcher["error"] == nil && watcher["pageError"] as? String == "", "\(watcher)")
            let seen = dict(watcher["media"])
            #expect(dict(seen["browser"])["title"] as? String == "Reverie", "\(seen)")
            #expect(dict(watcher["artwork"])["status"] as? Int == 200, "\(watcher)")
            #expect(seen["offered"] as? [String] == ["play", "pause", "enterpictureinpicture"], "\(seen)")
            let paused = acts(watcher)["pause"] ?? [:], played = acts(watcher)["play"] ?? [:]
            #expect(paused["handled"] as? Bool == true && paused["videoPaused"] as? Bool == true
                    && paused["pageState"] as? String == "paused" && dict(paused["run"])["state"] as? String == "playing",
                    "\(paused)")
            #expect(played["videoPaused"] as? Bool == false && dict(played["run"])["state"] as? String == "playing", "\(played)")
            #expect(acts(watcher)["seekforward"]?["handled"] as? Bool == false, "\(watcher)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// A live scene with music: the metadata is the music's own tags (no card), there is no scrubber (an infinite
        /// duration, the seeds' infinite time range), and previous/next and ±15 s move in the music.
        @Test func aLiveSceneWithMusicOffersItsTracksAndNoScrubber() throws {
            let dir = try TempDir()
            let make = MusicFixtures(dir: dir)
            let one = try make.tone("one.ogg", hz: 440, seconds: 40, extra: ["-metadata", "title=Tone One",
                                                                              "-metadata", "artist=The Sines"])
            let two = try make.tone("two.ogg", hz: 660, seconds: 40, extra: ["-metadata", "title=Tone Two"])
            let list = try dir.write("two.m3u", "\(one)\n\(two)\n")
            let (p, _) = try startLive([try timecodeScene(dir), "--webrtc", "--audio", list])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let seen = try pipWindow(try ownerPageURL(p), c, ["--media", "--act", "nexttrack", "--act", "previoustrack",
                                                              "--act", "seekforward"])
            #expect(seen["error"] == nil, "\(seen)\n\(p.allOutput)")
            let media = dict(seen["media"]), browser = dict(media["browser"])
            #expect(browser["title"] as? String == "Tone One" && browser["artist"] as? String == "The Sines"
                    && (browser["artwork"] as? [Any])?.isEmpty == true, "\(media)")
            #expect(dict(media["position"])["duration"] as? String == "Infinity" && dict(media["position"])["live"] as? Bool == true,
                    "\(media)")
            #expect(media["offered"] as? [String] == ["play", "pause", "seekbackward", "seekforward", "previoustrack",
                                                      "nexttrack", "enterpictureinpicture"], "\(media)")
            let did = acts(seen)
            #expect(dict(dict(did["nexttrack"]?["run"])["music"])["index"] as? Int == 1, "\(seen)")
            #expect(dict(dict(did["previoustrack"]?["run"])["music"])["index"] as? Int == 0, "\(seen)")
            #expect(did["seekforward"]?["handled"] as? Bool == true && did["seekforward"]?["error"] == nil, "\(seen)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// "Pop out" floats the page's video with a control strip in a Document Picture-in-Picture window. Made
        /// 480x270 (Chrome DevTools' window bounds), the window gets a picture of that size: no frame shown twice at
        /// the switch, the strip reads in it; its strip offers play/pause and ±15 s and shows what plays with the
        /// latency. Closed, the video is back in the page, playing its size, and the window's rendition goes.
        @Test func thePopOutFloatsTheVideoWithItsControlsAndItsSizeDrivesItsPicture() throws {
            let dir = try TempDir()
            let (p, _) = try startLive([try cardScene(dir), "--webrtc", "--max-renditions", "2"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let shot = dir.file("popout.png")
            let seen = try pipWindow(try ownerPageURL(p), c, ["--popout", "480x270", "--popout-screenshot", shot, "--close"])
            #expect(seen["error"] == nil && seen["pageError"] as? String == "", "\(seen)\n\(p.allOutput)")
            #expect(dict(seen["popoutOpened"])["videoInside"] as? Bool == true, "\(seen)")
            let change = dict(seen["switch"])
            let sizes = change["sizes"] as? [[String: Any]] ?? []
            #expect(sizes.last.map { "\($0["width"] ?? 0)x\($0["height"] ?? 0)" } == "480x270", "\(seen)")
            // The first frame of the new picture comes after the last of the old one: no moment shown twice.
            #expect(change["repeated"] as? Int == 0 && (sizes.last?["step"] as? Int ?? 0) >= 1, "\(change)")
            let strip = dict(seen["strip"])
            #expect(strip["buttons"] as? [String] == ["toggle", "back", "forward"], "\(strip)")
            let line = strip["line"] as? String ?? ""
            #expect(line.contains("Clair de lune · Claude Debussy") && line.contains("latency p50"), "\(strip)")
            #expect(dict(seen["back"])["video"] as? [Int] == [640, 360] && dict(seen["back"])["stage"] as? [Int] == [640, 360],
                    "\(seen)")
            // The window itself, as the viewer sees it: the picture and the strip under it.
            let pixels = try rgbPixels(shot), probe = try tool(["ffprobe", "-v", "error", "-show_entries", "stream=width,height",
                                                                "-of", "csv=p=0", shot])
            #expect(probe.out.trimmingCharacters(in: .whitespacesAndNewlines) == "480,304" && pixels.count == 480 * 304 * 3,
                    "\(probe.out)")
            #expect(p.waitForLine(timeout: 60) { $0.contains("rendition 480x270 dropped: no browser sees it") } != nil,
                    "\(p.allOutput)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// Two tabs (two browsers) pop out at two sizes: each gets a picture of its own size, within
        /// `--max-renditions 2`, while both are open.
        @Test func twoPopOutsFromTwoTabsEachGetTheirOwnPicture() throws {
            let dir = try TempDir()
            let (p, _) = try startLive([try cardScene(dir), "--webrtc", "--max-renditions", "2"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let page = try ownerPageURL(p), release = dir.file("release")
            let results = Latest<[String: Data]>([:])
            let finished = DispatchGroup()
            for size in ["416x234", "320x180"] {
                finished.enter()
                let done = dir.file(size)
                Thread.detachNewThread {
                    let seen = (try? pipWindow(page, c, ["--popout", size, "--done-file", done,
                                                         "--until-file", release, "--close"])) ?? [:]
                    let json = (try? JSONSerialization.data(withJSONObject: seen)) ?? Data()
                    results.update { $0[size] = json }
                    finished.leave()
                }
            }
            let both = poll(until: {
                FileManager.default.fileExists(atPath: dir.file("416x234"))
                    && FileManager.default.fileExists(atPath: dir.file("320x180"))
            }, timeout: 150)
            let during = statusJSON(c)
            try Data().write(to: URL(fileURLWithPath: release))
            #expect(finished.wait(timeout: .now() + 150) == .success)
            #expect(both, "\(p.allOutput)")
            let windows = (during["windows"] as? [[String: Any]] ?? []).compactMap { $0["size"] as? String }
            #expect(Set(windows) == ["416x234", "320x180"], "\(during)")
            for (size, json) in results.value {
                let seen = (try? JSONSerialization.jsonObject(with: json) as? [String: Any]) ?? [:]
                let sizes = dict(seen["switch"])["sizes"] as? [[String: Any]] ?? []
                #expect(seen["error"] == nil && sizes.last.map { "\($0["width"] ?? 0)x\($0["height"] ?? 0)" } == size
                        && dict(seen["switch"])["repeated"] as? Int == 0, "\(size): \(seen)")
            }
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }

        /// The bad cases: a pop-out closed before its picture comes leaves the page's video playing its own size and
        /// no rendition behind; a browser without Document Picture-in-Picture gets the video's own PiP and is told why.
        @Test func aPopOutClosedEarlyLeavesNothingBehindAndWithoutTheAPIItFallsBack() throws {
            let dir = try TempDir()
            let (p, _) = try startLive([try cardScene(dir), "--webrtc", "--max-renditions", "2"])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let early = try pipWindow(try ownerPageURL(p), c, ["--popout", "352x198", "--close-early"])
            #expect(early["error"] == nil && early["pageError"] as? String == "", "\(early)\n\(p.allOutput)")
            #expect(dict(early["back"])["video"] as? [Int] == [640, 360], "\(early)")
            #expect(poll(until: { (statusJSON(c)["windows"] as? [Any])?.isEmpty == true }, timeout: 60),
                    "\(statusJSON(c))\n\(p.allOutput)")

            let fallback = try pipWindow(try #require(pageURL(p)), c, ["--popout", "320x180", "--no-document-pip"])
            #expect(fallback["documentPictureInPicture"] as? Bool == false && fallback["fellBack"] as? Bool == true,
                    "\(fallback)")
            #expect((fallback["note"] as? String ?? "").contains("no Document Picture-in-Picture"), "\(fallback)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
        }
    }
}
