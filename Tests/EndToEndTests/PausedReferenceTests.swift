import Foundation
import Testing
import TestSupport

extension EndToEnd {
    @Suite(.serialized) struct PausedReferenceTests {
        /// A run paused and played twice over the API, its ticker moving with scene time: every recorded picture is
        /// the scene's, and so is every picture a live probe compared across the pauses (the reference follows the
        /// frames the pauses held scene time back). Before, the reference took scene time as the strip's frame ÷ fps
        /// and called every picture after the first pause corrupt.
        @Test func picturesAfterPausesAreTheScenes() throws {
            let dir = try TempDir()
            let scene = try dir.write("ticking.yaml", """
            title: Paused
            size: 640x360
            fps: 30
            widgets:
              - id: strip
                type: timecode
                place: {edge: top, size: 0.12}
              - id: news
                type: ticker
                items: ["Scene time moves this ticker", "and a pause holds it"]
                speed: 150
                place: {edge: bottom, size: 0.15}
            """)
            let file = dir.file("paused.ts")
            let (p, url) = try startLive([scene, "--record", file])
            let c = try #require(controlURL(p), "\(p.allOutput)")
            let u = try #require(url, "\(p.allOutput)")
            // Watching from before the first pause to past the last (the pauses take about 5 s of frames).
            let live = try LiveProcess(binary, ["probe", u, "--reference", scene, "--duration", "9", "--json", "--quiet"])
            #expect(poll(until: { statusJSON(c)["viewers"] as? Int == 1 }, timeout: 30), "\(live.allOutput)")
            var seen = 45
            #expect(p.waitForFrames("record:\(file)", atLeast: seen))
            for (paused, playing) in [(40, 40), (7, 30)] {
                #expect(try ctl(c, ["pause"]).status == 0)
                seen += paused
                #expect(p.waitForFrames("record:\(file)", atLeast: seen))
                #expect(try ctl(c, ["play"]).status == 0)
                seen += playing
                #expect(p.waitForFrames("record:\(file)", atLeast: seen))
            }
            #expect(live.waitForExit(timeout: 60) == 0, "\(live.allOutput)")
            let watched = try ProbeResult(json: live.stdout.joined(separator: "\n"))
            #expect(watched.compared >= 60 && watched.corrupt == 0 && watched.unreadable == 0, "\(live.allOutput)")
            // It saw the pauses: the scene stood behind the strip by the frames they held it (tens of frames; the waits
            // above are on status lines half a second apart, so not exactly 47).
            #expect((watched.fidelity["sceneFramesBehind"] as? Int ?? 0) >= 20, "\(watched.fidelity)")
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            let r = try tool([binary, "probe", file, "--reference", scene, "--json", "--quiet"])
            let seenThere = try ProbeResult(json: r.out)
            #expect(r.status == 0 && seenThere.int("frames") >= seen, "\(r.out)\n\(r.err)")
            #expect(seenThere.compared == seenThere.int("frames") && seenThere.corrupt == 0 && seenThere.unreadable == 0,
                    "\(r.out)")
            #expect((seenThere.fidelity["sceneFramesBehind"] as? Int ?? 0) >= 20, "\(seenThere.fidelity)")
        }
    }
}
