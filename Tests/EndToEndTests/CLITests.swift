import Foundation
import Testing
import TestSupport

/// The binary next to this test bundle.
let binary: String = {
    let dir = Bundle.main.bundleURL.path.hasSuffix(".xctest")
        ? Bundle.main.bundleURL.deletingLastPathComponent() : Bundle.main.bundleURL
    return dir.appendingPathComponent("pipcompose").path
}()

let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("examples").path

func pipcompose(_ args: [String]) throws -> Run {
    try runProgram(binary, args)
}

/// Width and height of a PNG, read from its IHDR chunk.
func pngSize(_ path: String) -> (Int, Int)? {
    guard let d = FileManager.default.contents(atPath: path), d.count > 24,
          d.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { return nil }
    func be(_ o: Int) -> Int { d[o..<(o + 4)].reduce(0) { $0 << 8 | Int($1) } }
    return (be(16), be(20))
}

extension EndToEnd {
    @Suite struct SnapshotCLITests {
        @Test(arguments: [("1280x720", 1280, 720), ("480x854", 480, 854), ("160x90", 160, 90)])
        func snapshotWritesAPNGOfTheAskedSize(size: String, w: Int, h: Int) throws {
            let dir = try TempDir()
            let out = dir.file("demo.png")
            let r = try pipcompose(["snapshot", "--size", size, "--at", "2.5", "-o", out])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.isEmpty, "\(r.stderr)")
            #expect(pngSize(out).map { $0 == (w, h) } == true)
            // ffprobe agrees it is a PNG of that size.
            let probe = Process()
            probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            probe.arguments = ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", out]
            let pipe = Pipe()
            probe.standardOutput = pipe
            try probe.run()
            let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            probe.waitUntilExit()
            #expect(text.trimmingCharacters(in: .whitespacesAndNewlines) == "png,\(w),\(h)")
        }

        @Test func sceneFilesRenderAtTheirOwnSize() throws {
            let dir = try TempDir()
            let out = dir.file("slides.png")
            let r = try pipcompose(["snapshot", examples + "/finite-slideshow.json", "-o", out])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(pngSize(out).map { $0 == (1920, 1080) } == true)
        }

        @Test(arguments: [
            (["--size", "0x720"], "positive"),
            (["--size", "1281x720"], "even"),
            (["--size", "big"], "WIDTHxHEIGHT"),
            (["--size", "8000x8000"], "largest"),
            (["--at", "-1"], "--at"),
        ])
        func badOptionsAreRefusedWithTheRule(extra: [String], words: String) throws {
            let dir = try TempDir()
            let r = try pipcompose(["snapshot", "-o", dir.file("x.png")] + extra)
            #expect(r.status != 0)
            #expect(r.stderr.contains(words), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.file("x.png")))
        }

        /// A file is never replaced unless the user said so: snapshot's PNG and probe's report are refused when
        /// they exist (the file untouched), and replaced with --overwrite.
        @Test func anExistingFileIsReplacedOnlyWithOverwrite() throws {
            let dir = try TempDir()
            let png = dir.file("x.png"), report = dir.file("report.json")
            for path in [png, report] { try "mine".write(toFile: path, atomically: true, encoding: .utf8) }
            let kept = try pipcompose(["snapshot", "--size", "320x180", "-o", png])
            #expect(kept.status != 0 && kept.stderr.contains("exists; pass --overwrite to replace it"), "\(kept.stderr)")
            #expect((try? String(contentsOfFile: png, encoding: .utf8)) == "mine")
            let replaced = try pipcompose(["snapshot", "--size", "320x180", "-o", png, "--overwrite"])
            #expect(replaced.status == 0 && pngSize(png).map { $0 == (320, 180) } == true, "\(replaced.stderr)")
            let probe = try pipcompose(["probe", "rtsp://127.0.0.1:1/x", "--report", report, "--timeout", "1"])
            #expect(probe.status != 0 && probe.stderr.contains("'\(report)' exists; pass --overwrite"), "\(probe.stderr)")
            #expect((try? String(contentsOfFile: report, encoding: .utf8)) == "mine")
        }

        @Test func aBadSceneNamesFileLineAndColumnWithoutAStackTrace() throws {
            let dir = try TempDir()
            let scene = dir.file("bad.yaml")
            try "fps: 30\nwidgets:\n  - type: ticker\n    speed: fast\n".write(toFile: scene, atomically: true, encoding: .utf8)
            let r = try pipcompose(["snapshot", scene, "-o", dir.file("x.png")])
            #expect(r.status == 1)
            #expect(r.stderr.contains("\(scene):4:12: widgets[0].speed: expected a number"), "\(r.stderr)")
            #expect(!r.stderr.contains("Fatal") && !r.stderr.contains("Stack"))
            #expect(!FileManager.default.fileExists(atPath: dir.file("x.png")))
        }

        @Test func aMissingImageWarnsAndStillRenders() throws {
            let dir = try TempDir()
            let scene = dir.file("img.yaml")
            try "widgets:\n  - {type: image, source: nothere.png, place: fill}\n".write(toFile: scene, atomically: true, encoding: .utf8)
            let r = try pipcompose(["snapshot", scene, "--size", "320x180", "-o", dir.file("x.png")])
            #expect(r.status == 0)
            #expect(r.stderr.contains("warning:") && r.stderr.contains("nothere.png") && r.stderr.contains("placeholder"))
            #expect(r.stderr.contains("\(scene):2:5: widget 'image1'"), "the warning says where the scene gives it: \(r.stderr)")
            #expect(pngSize(dir.file("x.png")).map { $0 == (320, 180) } == true)
        }

        @Test func anUnwritableOutputIsRefusedBeforeRendering() throws {
            let r = try pipcompose(["snapshot", "-o", "/nonexistent-dir/x.png"])
            #expect(r.status != 0)
            #expect(r.stderr.contains("/nonexistent-dir"))
        }
    }

    /// `ctl` verbs are subcommands with their own help; a wrong verb or argument is refused before any request.
    @Suite struct CtlCLITests {
        @Test func eachVerbHasItsOwnHelpAndBadWordsAreRefusedWithUsage() throws {
            let help = try pipcompose(["ctl", "--help"])
            #expect(help.status == 0)
            for verb in ["status", "resize", "pause", "play", "skip", "set", "nowplaying", "record", "push", "frame", "events"] {
                #expect(help.stdout.contains(verb), "ctl --help lists \(verb)")
            }
            let record = try pipcompose(["ctl", "record", "--help"])
            #expect(record.status == 0 && record.stdout.contains("start or stop"), "\(record.stdout)")
            let bogus = try pipcompose(["ctl", "bogus"])
            #expect(bogus.status != 0 && bogus.stderr.contains("bogus"), "\(bogus.stderr)")
            let action = try pipcompose(["ctl", "record", "begin", "/tmp/x.mp4"])
            #expect(action.status != 0 && action.stderr.contains("begin"), "\(action.stderr)")
            let skip = try pipcompose(["ctl", "skip", "soon"])
            #expect(skip.status != 0 && skip.stderr.contains("skip takes one number"), "\(skip.stderr)")
            let set = try pipcompose(["ctl", "set", "memo", "x"])
            #expect(set.status != 0 && set.stderr.contains("ID.PROPERTY"), "\(set.stderr)")
            let url = try pipcompose(["ctl", "--control", "ftp://x", "status"])
            #expect(url.status != 0 && url.stderr.contains("http://127.0.0.1:8555"), "\(url.stderr)")
        }

        @Test func anUnreachableInstanceIsNamedWithWhatToCheck() throws {
            let r = try pipcompose(["ctl", "status", "--control", "http://127.0.0.1:\(freePort())"])
            #expect(r.status == 1)
            #expect(r.stderr.contains("cannot reach pipcompose") && r.stderr.contains("--control"), "\(r.stderr)")
        }
    }
}
