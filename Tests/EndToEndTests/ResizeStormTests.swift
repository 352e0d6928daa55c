import Foundation
import Testing
import TestSupport

/// What tests/Fixtures/resize_storm.py reported.
func stormReport(_ r: (status: Int32, out: String, err: String)) throws -> [String: Any] {
    let line = try #require(r.out.split(separator: "\n").last, "storm: \(r.err)")
    return try #require(try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(r.out) \(r.err)")
}

/// "stopped after N frames: rendered R, repeated P, …" → R + P, the frames the loop drew and sent.
func framesSent(_ p: LiveProcess) -> Int? {
    guard let line = p.stdout.last(where: { $0.hasPrefix("stopped after") }) else { return nil }
    func value(_ name: String) -> Int? {
        line.range(of: name + #" \d+"#, options: .regularExpression).flatMap { Int(line[$0].split(separator: " ")[1]) }
    }
    guard let rendered = value("rendered"), let repeated = value("repeated") else { return nil }
    return rendered + repeated
}

extension EndToEnd {
    @Suite(.serialized) struct ResizeStormTests {
        /// Resizes at 20 a second over random sizes (tiny, odd, portrait, 4K, repeats, back home) with viewers
        /// joining and leaving: a `fit` MP4 holds every frame drawn at its own size, the parts of a `split` file
        /// add up to every frame, the `.ts` follows, each viewer decodes to the end, the API answers every request.
        @Test func aResizeStormLosesNoFrameInAnyRecording() throws {
            let dir = try TempDir()
            let fit = dir.file("fit.mp4"), ts = dir.file("follow.ts"), split = dir.file("split.mkv")
            let (p, url) = try startLive([panelScene, "--record", fit, "--record", ts])
            let (q, _) = try startLive([panelScene, "--record", split, "--record-resize", "split"], rtsp: false)
            let u = try #require(url), c1 = try #require(controlURL(p)), c2 = try #require(controlURL(q))
            // 4K frames take a debug build long to draw; the cap keeps the test's run time sane, the sizes wild.
            let storm = ["python3", fixture("resize_storm.py"), "--count", "300", "--rate", "20", "--max-side", "1920"]
            let second = try LiveProcess("/usr/bin/env", storm + [c2, "--seed", "2", "--token", try ownerToken(c2)])
            let first = try stormReport(try tool(storm + [c1, "--viewers", u, "--token", try ownerToken(c1)], timeout: 120))
            #expect(second.waitForExit(timeout: 120) == 0, "\(second.allOutput)")
            let other = try stormReport((0, second.stdout.joined(separator: "\n"), second.stderr.joined()))
            for report in [first, other] {
                #expect(report["resizes"] as? Int == 300)
                // Odd sizes are refused with a reason; the rest are applied.
                #expect((report["refused"] as? Int ?? 0) < 150, "\(report)")
            }
            #expect(first["viewerFailures"] as? [String] == [], "\(first)")
            #expect(first["viewers"] as? Int ?? 0 >= 3)
            // The split run started a part at every resize it applied. It keeps the newest 16 that ended one by one
            // and the rest as one set of counts, in status and in /metrics: once the last parts have finished, no
            // more than 16 stopped parts are listed, and their series are gone but for one named "earlier".
            var listed: [[String: Any]] = [], earlier: [String: Any]?
            let folded = poll(until: {
                let st = statusJSON(c2)
                listed = (st["outputs"] as? [[String: Any]] ?? []).filter { ($0["id"] as? String ?? "").hasPrefix("record:") }
                earlier = st["earlierOutputs"] as? [String: Any]
                return earlier != nil && listed.filter { $0["state"] as? String == "stopped" }.count <= 16
            }, timeout: 30, every: 0.5)
            #expect(folded, "\(listed.map { "\($0["id"] ?? "") \($0["state"] ?? "")" }) earlier \(earlier ?? [:])")
            let metrics = String(decoding: http("GET", c2 + "/metrics").1, as: UTF8.self)
            let series = metrics.split(separator: "\n").filter { $0.hasPrefix("pipcompose_output_frames_total{") }
            #expect(series.count <= listed.count + 1 && series.contains { $0.contains(#"output="earlier""#) },
                    "\(series.count) series for \(listed.count) listed outputs: \(series)")
            for proc in [p, q] {
                proc.signal(SIGINT)
                #expect(proc.waitForExit(timeout: 60) == 0, "\(proc.allOutput)")
                #expect(!proc.stderr.contains { $0.contains("error") }, "\(proc.stderr.filter { $0.contains("error") })")
            }
            let sent = try #require(framesSent(p), "\(p.stdout.suffix(5))")
            let fitSizes = try frameSizes(fit)
            #expect(fitSizes.count == sent, "fit: \(fitSizes.count) frames of \(sent) drawn")
            #expect(Set(fitSizes) == ["640x360"])
            #expect(try decodedFrames(ts) == sent, "ts")
            #expect(Set(try frameSizes(ts)).count > 10)

            let sentSplit = try #require(framesSent(q))
            let parts = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("split") }
            #expect(parts.count > 10)
            var total = 0
            for part in parts {
                let sizes = try frameSizes(dir.file(part))
                #expect(Set(sizes).count == 1, "\(part): \(Set(sizes))")
                total += sizes.count
            }
            #expect(total == sentSplit, "split: \(total) frames in \(parts.count) parts of \(sentSplit) drawn")
            // The summary adds up the same way: the parts it lists one by one and its line for the earlier ones.
            let summary = q.stdout.drop { !$0.hasPrefix("stopped after") }
            let partLines = summary.filter { $0.hasPrefix("record:") }
            let earlierLine = try #require(summary.first { $0.contains("earlier outputs (ended)") }, "\(summary)")
            let earlierParts = try #require(Int(earlierLine.split(separator: " ")[0]), "\(earlierLine)")
            #expect(partLines.count <= 16 && earlierParts + partLines.count == parts.count, "\(summary)")
            let summed = (partLines + [earlierLine]).compactMap(LiveProcess.frames(in:)).reduce(0, +)
            #expect(summed == sentSplit, "\(summary)")
        }

        /// Ctrl-C with an event stream open and a viewer connected: a clean exit prints no error.
        @Test func aCleanExitIsQuiet() throws {
            let (p, url) = try startLive([])
            let c = try #require(controlURL(p))
            let events = try LiveProcess(binary, ["ctl", "--control", c, "events"])
            #expect(events.waitForLine { $0.contains("listening for events") } != nil, "\(events.allOutput)")
            let viewer = try LiveProcess("/usr/bin/env", ["ffmpeg", "-v", "error", "-rtsp_transport", "tcp",
                                                          "-i", try #require(url), "-f", "null", "-"])
            #expect(p.waitForLine { $0.contains("rtsp: 1 viewer") } != nil)
            #expect(statusJSON(c)["width"] != nil)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
            #expect(!p.stderr.contains { $0.contains("error") || $0.contains("Error") }, "\(p.stderr)")
            viewer.signal(SIGKILL)
            events.signal(SIGKILL)
            _ = viewer.waitForExit()
            _ = events.waitForExit()
        }
    }
}
